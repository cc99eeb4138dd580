package dev.aura.realtime.front.transport;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.front.config.ConnectionBounds;
import dev.aura.realtime.front.metrics.FrontMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link HttpDeadlines} on a frozen clock, for what real sockets make hard to time: a
 * {@code 100 Continue} is not a response, and pipelined requests keep the connection while one
 * of them is unanswered (the real-socket cases are in {@link ConnectionBoundsIT}).
 */
class HttpDeadlinesTest {
    private static final ConnectionBounds BOUNDS =
            new ConnectionBounds(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofSeconds(10));
    private final Deque<ChannelHandlerContext> held = new ArrayDeque<>();
    private final EmbeddedChannel socket = new EmbeddedChannel();

    HttpDeadlinesTest() {
        socket.freezeTime();
        socket.pipeline()
                .addLast(new HttpServerCodec())
                .addLast(
                        HttpDeadlines.NAME,
                        new HttpDeadlines(Duration.ofSeconds(5), BOUNDS, new FrontMetrics(new SimpleMeterRegistry())))
                .addLast(new HttpObjectAggregator(1024))
                .addLast(new SimpleChannelInboundHandler<FullHttpRequest>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
                        if (req.uri().equals("/slow")) {
                            held.add(ctx); // answered later by the test, as a REST broadcast waits for NATS
                        } else {
                            ok(ctx);
                        }
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        ctx.close(); // as HttpRouter: the aggregator's "closed while aggregating" after a 408
                    }
                });
    }

    @AfterEach
    void close() {
        socket.finishAndReleaseAll();
    }

    private static void ok(ChannelHandlerContext ctx) {
        var res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        res.headers().set(HttpHeaderNames.CONTENT_LENGTH, 0);
        ctx.writeAndFlush(res);
    }

    private void send(String text) {
        socket.writeInbound(Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII));
    }

    private String written() {
        socket.runPendingTasks();
        StringBuilder out = new StringBuilder();
        for (ByteBuf b = socket.readOutbound(); b != null; b = socket.readOutbound()) {
            out.append(b.toString(StandardCharsets.US_ASCII));
            b.release();
        }
        return out.toString();
    }

    private void advance(Duration d) {
        socket.advanceTimeBy(d.toMillis(), TimeUnit.MILLISECONDS);
        socket.runScheduledPendingTasks();
    }

    @Test
    void aHundredContinueDoesNotStartTheKeepAliveTimerAndTheBodyDeadlineStillHolds() {
        send("POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
        assertThat(written()).startsWith("HTTP/1.1 100 Continue");
        advance(Duration.ofSeconds(5));
        assertThat(socket.isOpen())
                .as("past the keep-alive bound, inside the body bound")
                .isTrue();
        advance(Duration.ofSeconds(6));
        assertThat(written()).startsWith("HTTP/1.1 408 Request Timeout");
        assertThat(socket.isOpen()).isFalse();
    }

    @Test
    void pipelinedRequestsKeepTheConnectionUntilTheLastIsAnswered() {
        send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\nGET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(written()).startsWith("HTTP/1.1 200 OK");
        advance(Duration.ofSeconds(3));
        assertThat(socket.isOpen()).as("the server is still working on /slow").isTrue();
        ok(held.remove());
        assertThat(written()).startsWith("HTTP/1.1 200 OK");
        advance(Duration.ofMillis(900));
        assertThat(socket.isOpen()).isTrue();
        advance(Duration.ofMillis(200));
        assertThat(socket.isOpen())
                .as("idle for the keep-alive bound after the last response")
                .isFalse();
    }

    @Test
    void theFirstRequestHasItsOwnDeadline() {
        advance(Duration.ofMillis(4900));
        assertThat(socket.isOpen()).isTrue();
        advance(Duration.ofMillis(200));
        assertThat(socket.isOpen()).isFalse();
    }
}
