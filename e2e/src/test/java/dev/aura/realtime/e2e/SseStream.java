package dev.aura.realtime.e2e;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * A test reader of a {@code text/event-stream}: parses {@code id:}, {@code event:} and
 * {@code data:} fields into {@link Event}s (comments counted as heartbeats) on a daemon thread.
 */
final class SseStream implements AutoCloseable {
    record Event(String id, String event, String data) {}

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    final int status;
    final String body;
    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final Stream<String> lines;
    volatile int comments;

    private SseStream(int status, String body, Stream<String> lines) {
        this.status = status;
        this.body = body;
        this.lines = lines;
    }

    static SseStream open(String url, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).header("Accept", "text/event-stream");
        headers.forEach(b::header);
        HttpResponse<Stream<String>> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofLines());
        if (r.statusCode() != 200) {
            String body = String.join("\n", r.body().toList());
            return new SseStream(r.statusCode(), body, Stream.empty());
        }
        SseStream s = new SseStream(200, null, r.body());
        Thread t = new Thread(s::read, "sse-reader");
        t.setDaemon(true);
        t.start();
        return s;
    }

    private void read() {
        String id = null;
        String event = null;
        StringBuilder data = new StringBuilder();
        try {
            for (String line : (Iterable<String>) lines::iterator) {
                if (line.isEmpty()) {
                    if (event != null || !data.isEmpty()) {
                        queue.add(new Event(id, event == null ? "message" : event, data.toString()));
                    }
                    id = null;
                    event = null;
                    data.setLength(0);
                } else if (line.startsWith(":")) {
                    comments++;
                } else if (line.startsWith("id: ")) {
                    id = line.substring(4);
                } else if (line.startsWith("event: ")) {
                    event = line.substring(7);
                } else if (line.startsWith("data: ")) {
                    data.append(line.substring(6));
                }
            }
        } catch (RuntimeException e) {
            // stream closed
        }
        queue.add("EOF");
    }

    /** The next event matching {@code p} (others are skipped); fails on timeout or end of stream. */
    Event await(Predicate<Event> p, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Object o = queue.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (o == null) {
                throw new AssertionError("no matching SSE event within " + timeout);
            }
            if (o instanceof Event e && p.test(e)) {
                return e;
            }
            if ("EOF".equals(o)) {
                throw new AssertionError("SSE stream ended before a matching event");
            }
        }
    }

    /** Waits for the end of the stream, skipping events. */
    void awaitEnd(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Object o = queue.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (o == null) {
                throw new AssertionError("SSE stream did not end within " + timeout);
            }
            if ("EOF".equals(o)) {
                return;
            }
        }
    }

    @Override
    public void close() {
        CompletableFuture.runAsync(lines::close);
    }
}
