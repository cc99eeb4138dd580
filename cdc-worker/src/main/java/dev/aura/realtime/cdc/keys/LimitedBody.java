package dev.aura.realtime.cdc.keys;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * A response body read into memory up to a byte limit, for {@link JwksFetcher}: a status other
 * than 200, a {@code Content-Length} over the limit, or more bytes than the limit arriving cancel
 * the body at once (the HTTP client then closes the connection) and fail with {@link Refused}.
 * (Java 25's {@code BodySubscribers.limiting} does the same; the product targets Java 21.)
 */
final class LimitedBody implements HttpResponse.BodySubscriber<byte[]> {
    /** Why a body was not read. */
    static final class Refused extends IOException {
        Refused(String message) {
            super(message, null);
        }
    }

    private final CompletableFuture<byte[]> result = new CompletableFuture<>();
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final long max;
    private final String refusal;
    private Flow.Subscription subscription;
    private boolean done;

    private LimitedBody(long max, String refusal) {
        this.max = max;
        this.refusal = refusal;
    }

    /** The body of {@code info}'s response, read only when it is a 200 of at most {@code max} bytes. */
    static LimitedBody of(HttpResponse.ResponseInfo info, long max) {
        if (info.statusCode() != 200) {
            return new LimitedBody(max, "the answer was HTTP " + info.statusCode() + ", not 200");
        }
        long declared = info.headers().firstValueAsLong("Content-Length").orElse(-1);
        if (declared > max) {
            return new LimitedBody(max, "the body is larger than " + max + " bytes");
        }
        return new LimitedBody(max, null);
    }

    @Override
    public CompletionStage<byte[]> getBody() {
        return result;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        if (refusal != null) {
            refuse(refusal);
        } else {
            s.request(Long.MAX_VALUE);
        }
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
        if (done) {
            return;
        }
        for (ByteBuffer b : items) {
            if (bytes.size() + (long) b.remaining() > max) {
                refuse("the body is larger than " + max + " bytes");
                return;
            }
            byte[] chunk = new byte[b.remaining()];
            b.get(chunk);
            bytes.writeBytes(chunk);
        }
    }

    @Override
    public void onError(Throwable t) {
        done = true;
        result.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
        if (!done) {
            done = true;
            result.complete(bytes.toByteArray());
        }
    }

    private void refuse(String why) {
        done = true;
        subscription.cancel();
        result.completeExceptionally(new Refused(why));
    }
}
