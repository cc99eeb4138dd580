package dev.aura.realtime.front.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.auth.Credentials;
import dev.aura.realtime.front.broadcast.Broadcasts;
import dev.aura.realtime.front.broadcast.PrivateChannels;
import dev.aura.realtime.front.broadcast.RestBroadcasts;
import dev.aura.realtime.front.channel.ChannelLayer;
import dev.aura.realtime.front.channel.ChannelRouter;
import dev.aura.realtime.front.config.ConnectionBounds;
import dev.aura.realtime.front.fanout.CdcHealth;
import dev.aura.realtime.front.fanout.Fanout;
import dev.aura.realtime.front.fanout.LocalTopics;
import dev.aura.realtime.front.fanout.QueueLimits;
import dev.aura.realtime.front.history.HistoryStore;
import dev.aura.realtime.front.inspect.ProjectInspector;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.postgres.PostgresChanges;
import dev.aura.realtime.front.presence.PresenceExtension;
import dev.aura.realtime.front.protocol.BinaryFrames;
import dev.aura.realtime.front.protocol.FanoutFrames;
import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.protocol.JsonFrames;
import dev.aura.realtime.front.protocol.PhoenixCodec;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.quota.ProjectQuota;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.relay.ChannelAccessClient;
import dev.aura.realtime.front.relay.HeldChanges;
import dev.aura.realtime.front.relay.ProjectKeysSource;
import dev.aura.realtime.front.resume.Resumes;
import dev.aura.realtime.front.session.Limits;
import dev.aura.realtime.front.session.Sessions;
import dev.aura.realtime.front.session.WireHead;
import dev.aura.realtime.front.transport.TransportContext;
import dev.aura.realtime.testkit.MutableClock;
import dev.aura.realtime.testkit.TestTokens;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The channel layer in memory: real index, fan-out and history, fake relay seams, unavailable
 * presence, EmbeddedChannel sockets, a clock moved by hand.
 */
public final class ChannelHarness {
    public final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    public final ObjectMapper mapper = WireJson.mapper();
    public final JsonFrames json = new JsonFrames(mapper, 5);
    public final BinaryFrames binary = new BinaryFrames(json);
    public final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    public final FrontMetrics metrics = new FrontMetrics(meters);
    public final Fakes.Checker checker = new Fakes.Checker();
    public final Fakes.Registry registry = new Fakes.Registry();
    public final Fakes.Publisher publisher = new Fakes.Publisher();
    public final LocalTopics topics = new LocalTopics();
    public final HistoryStore history = new HistoryStore(10, 100, 1 << 20, 600_000, 100, 1 << 20);
    /** The clock of the event loops' delivery queues (nanoseconds), moved by hand with {@link #clock}. */
    public final LongSupplier nanoTime = () -> clock.millis() * 1_000_000L;

    public final CdcHealth cdc = new CdcHealth(topics, metrics, clock);
    public final Fanout fanout = new Fanout(
            topics,
            new FanoutFrames(json, binary),
            UnpooledByteBufAllocator.DEFAULT,
            metrics,
            clock,
            history,
            new QueueLimits(Duration.ofSeconds(5), 1 << 20),
            nanoTime,
            cdc);
    public final Sessions sessions = new Sessions();
    public final JwtVerifier verifier = new JwtVerifier(FrontFixture.SECRET, clock);
    /** Tokens whose iat and exp count from {@link #clock}. */
    public final TestTokens tokens = FrontFixture.TOKENS.clock(clock);

    /**
     * Per-project limits of the harness: by default 3 channels per client, 64-byte payloads, the
     * rest high enough for per-connection tests; {@link #overrides} set a project's own, and
     * {@link #others} are the other replicas' counts.
     */
    public final Fakes.Board others = new Fakes.Board();

    public final Fakes.LimitsTable overrides = new Fakes.LimitsTable();

    public final ProjectQuotas quotas =
            new ProjectQuotas(new ProjectQuota(1000, 1000, 1000, 3, 1 << 20, 64, 1000), overrides, others, clock);
    /** The channel-access requests asked, in order. */
    public final List<ChannelAccess.Request> accessAsked = new CopyOnWriteArrayList<>();

    /**
     * What the fake cdc-worker answers to channel-access requests (default: a project without
     * {@code private_only}, everything allowed); a null answer leaves the request pending in
     * {@link #accessPending}.
     */
    public volatile Function<ChannelAccess.Request, ChannelAccess.Reply> access =
            r -> new ChannelAccess.Reply(null, false, true, true, true, null, List.of(), false);

    /** Requests answered null by {@link #access}, to be completed by the test. */
    public final List<CompletableFuture<ChannelAccess.Reply>> accessPending = new CopyOnWriteArrayList<>();

    private final ChannelAccessClient accessClient = r -> {
        accessAsked.add(r);
        ChannelAccess.Reply reply = access.apply(r);
        if (reply == null) {
            CompletableFuture<ChannelAccess.Reply> pending = new CompletableFuture<>();
            accessPending.add(pending);
            return pending;
        }
        return CompletableFuture.completedFuture(reply);
    };

    /**
     * What the fake cdc-worker answers about projects' API keys and token issuers (default: no
     * project has any); tests set it, or answer later through a pending future.
     */
    public volatile ProjectKeysSource projectKeys = ProjectKeysSource.NONE;
    /** Every credential: the platform's HS256 secret, and {@link #projectKeys}; answers kept 30 s. */
    public final Credentials credentials =
            new Credentials(verifier, r -> projectKeys.ask(r), clock, Duration.ofSeconds(30), Duration.ofSeconds(30));

    /** What the fake JetStream says the project's quarantine and late lane hold (inspector). */
    public volatile HeldChanges.Snapshot held =
            new HeldChanges.Snapshot(HeldChanges.Held.NONE, HeldChanges.Held.NONE, true);

    public final ProjectInspector inspector =
            new ProjectInspector(quotas, cdc, p -> CompletableFuture.completedFuture(held), "front-test");
    public final PrivateChannels privateChannels = new PrivateChannels(accessClient, fanout, mapper, clock);
    public final PostgresChanges postgres =
            new PostgresChanges(checker, registry, cdc, mapper, "front-test", clock, 15_000);
    public final Broadcasts broadcasts = new Broadcasts(privateChannels, quotas, fanout, publisher, clock);
    /** The channel layer with unavailable presence and no resume. */
    public final ChannelLayer channels = channels(new PresenceExtension.Unavailable());

    /** The harness's channel layer with another presence seam. */
    public ChannelLayer channels(PresenceExtension presence) {
        return new ChannelLayer(
                credentials,
                quotas,
                new Limits(100, 100, 10, 1 << 20, 128),
                sessions,
                topics,
                fanout,
                presence,
                postgres,
                privateChannels,
                broadcasts,
                Resumes.off(),
                metrics,
                mapper,
                clock);
    }

    /** The transport over the harness's channel layer (64 KiB frames, the harness's limits). */
    public TransportContext transport() {
        return new TransportContext(
                channels,
                credentials,
                quotas,
                sessions,
                metrics,
                json,
                binary,
                64 * 1024,
                Duration.ofSeconds(60),
                Duration.ofSeconds(10),
                () -> true,
                () -> "",
                Duration.ofSeconds(15),
                new RestBroadcasts(privateChannels, quotas, fanout, publisher, mapper, clock),
                new ConnectionBounds(Duration.ofSeconds(75), Duration.ofSeconds(10), Duration.ofSeconds(10)),
                inspector);
    }

    /** An anon token of {@link FrontFixture#PROJECT} expiring {@code ttl} after the harness clock's now. */
    public String token(Duration ttl) {
        return tokens.ttl(ttl).anon(FrontFixture.PROJECT);
    }

    /** A WebSocket connection in memory (wire head, Phoenix codec and session handler). */
    public Conn connect(Vsn vsn) {
        return connect(vsn, channels, new EmbeddedChannel());
    }

    /** A WebSocket connection in memory served by {@code with} (e.g. the harness's channel layer with another seam). */
    public Conn connect(Vsn vsn, ChannelLayer with) {
        return connect(vsn, with, new EmbeddedChannel());
    }

    /**
     * A WebSocket connection in memory on {@code ch} (e.g. a subclass that counts flushes or holds
     * writes back): adds the wire head, the Phoenix codec and the session handler.
     */
    public Conn connect(Vsn vsn, EmbeddedChannel ch) {
        return connect(vsn, channels, ch);
    }

    private Conn connect(Vsn vsn, ChannelLayer with, EmbeddedChannel ch) {
        try {
            ch.pipeline()
                    .addLast(WireHead.NAME, WireHead.INSTANCE)
                    .addLast(new PhoenixCodec(vsn, json, binary, metrics::malformed))
                    .addLast(new ChannelRouter(with, Framing.of(vsn), verifier.verify(token(Duration.ofHours(1)))));
            return new Conn(ch);
        } catch (AuthException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One client socket. */
    public final class Conn {
        public final EmbeddedChannel ch;

        Conn(EmbeddedChannel ch) {
            this.ch = ch;
        }

        public void send(String text) {
            ch.writeInbound(new TextWebSocketFrame(text));
            ch.runPendingTasks();
        }

        public void sendBinary(byte[] bytes) {
            ch.writeInbound(new BinaryWebSocketFrame(ch.alloc().buffer().writeBytes(bytes)));
            ch.runPendingTasks();
        }

        /** Next text frame as JSON, or null when none is queued. */
        public JsonNode next() {
            ServerFrames.Message m = nextMessage();
            if (m == null) {
                return null;
            }
            if (m.binary()) {
                throw new AssertionError("expected text frame, got a binary one");
            }
            try {
                return mapper.readTree(m.text());
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        }

        /** Next frame's bytes (binary frames). */
        public byte[] nextBinary() {
            ServerFrames.Message m = nextMessage();
            if (m == null || !m.binary()) {
                throw new AssertionError("expected binary frame, got " + m);
            }
            return m.bytes();
        }

        /**
         * Next WebSocket message the server wrote (codec frames and the fan-out's raw frames alike),
         * after running the loop's pending tasks (the delivery queue's drain and flush); null when none.
         */
        public ServerFrames.Message nextMessage() {
            ch.runPendingTasks();
            Object written = ch.readOutbound();
            return written == null ? null : ServerFrames.read(written);
        }

        public List<JsonNode> drain() {
            List<JsonNode> out = new ArrayList<>();
            for (JsonNode n = next(); n != null; n = next()) {
                out.add(n);
            }
            return out;
        }

        public void close() {
            ch.finishAndReleaseAll();
        }
    }
}
