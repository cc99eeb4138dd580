package dev.aura.realtime.bench;

import java.net.URI;
import java.util.BitSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * One client of the reconnect storm ({@link ReconnectStormBench}), behaving as realtime-js does:
 * on its socket's close it reconnects after {@link #reconnectAfterMs} (RealtimeClient's
 * {@code RECONNECT_INTERVALS} 1 s, 2 s, 5 s, then 10 s, per failed attempt), joins its channel
 * again as soon as the socket is open, and after a refused join rejoins after
 * {@link #rejoinAfterMs} (RealtimeChannel's 1 s, 2 s, 5 s, then 10 s), as it does after a join
 * unanswered within {@link #JOIN_TIMEOUT_MS} (after a {@code phx_leave}). realtime-js itself does not
 * jitter; we add up to 10 % of each step, as clients whose sockets close a few milliseconds apart
 * would spread. Its state is guarded by {@code this} (frames arrive on the event loop, the bench
 * thread reads).
 */
final class StormClient {
    static final String TOPIC = "realtime:reconnect";
    /**
     * realtime-js's join timeout with {@code postgres_changes_options.wait}: max(its 10 s
     * {@code timeout}, the wait's timeout + 10 s grace).
     */
    static final long JOIN_TIMEOUT_MS = Math.max(10_000, ReconnectStormBench.WAIT_MS + 10_000);

    private final WsClients ws;
    private final int index;
    private final String config;
    private final URI reconnectTo;
    private WsClients.Listener listener;
    /** Runs once when the client is first SUBSCRIBED (the bench's in-flight window). */
    private Runnable onFirstSubscribed = () -> {};

    private WsClients.Conn conn;
    /** 1 on the first socket, 2 after the first close. */
    private int phase = 1;

    private final long[] okAt = new long[3];
    private final long[] pushAt = new long[3];
    private final long[] subscribedAt = new long[3];
    private int joins;
    private int socketTries;
    private int joinTries;
    private int retries;
    private final BitSet rows = new BitSet();
    /** When each row first arrived ({@code nanoTime}; 0: not yet), by row number. */
    private long[] arrivedAt = new long[256];

    private long copies;
    private long lost;
    private int firstLost = -1;
    /** When the client was SUBSCRIBED again and had every row owed until then (0: never). */
    private long caughtUpAt;

    /** Called with each refusal's text (the error reply's payload, or "no reply") so the report can say why. */
    private final Consumer<String> refusals;

    StormClient(WsClients ws, int index, String config, URI reconnectTo, Consumer<String> refusals) {
        this.refusals = refusals;
        this.ws = ws;
        this.index = index;
        this.config = config;
        this.reconnectTo = reconnectTo;
    }

    static long reconnectAfterMs(int tries) {
        return jitter(tries >= 1 && tries <= 4 ? new long[] {1000, 2000, 5000, 10000}[tries - 1] : 10000);
    }

    static long rejoinAfterMs(int tries) {
        return jitter(tries >= 1 && tries <= 3 ? new long[] {1000, 2000, 5000}[tries - 1] : 10000);
    }

    private static long jitter(long ms) {
        return ms + ThreadLocalRandom.current().nextLong(ms / 10 + 1);
    }

    synchronized void listener(WsClients.Listener l) {
        listener = l;
    }

    /** Opens the first socket; {@code subscribed} runs once it is SUBSCRIBED (on an event loop). */
    synchronized void start(URI uri, Runnable subscribed) {
        onFirstSubscribed = subscribed;
        open(uri);
    }

    private synchronized void open(URI uri) {
        WsClients.Conn c = ws.connect(uri, index, listener);
        conn = c;
        c.open.whenComplete((ok, err) -> opened(c, uri, err));
    }

    private synchronized void opened(WsClients.Conn c, URI uri, Throwable err) {
        if (c != conn) {
            return;
        }
        if (err != null) {
            retries++;
            socketTries++;
            ws.schedule(() -> open(uri), reconnectAfterMs(socketTries));
            return;
        }
        socketTries = 0;
        join();
    }

    private synchronized void join() {
        joins++;
        conn.send(PhxFrames.join(TOPIC, config, null, "J" + joins));
        WsClients.Conn c = conn;
        int sent = joins;
        int p = phase;
        ws.schedule(() -> timeout(c, sent, p), JOIN_TIMEOUT_MS);
    }

    /** realtime-js on a join without reply: leave, then rejoin on the rejoin schedule. */
    private synchronized void timeout(WsClients.Conn c, int sent, int p) {
        if (c != conn || joins != sent || phase != p || okAt[p] != 0 || !c.channel.isActive()) {
            return;
        }
        retries++;
        joinTries++;
        refusals.accept("no reply within " + JOIN_TIMEOUT_MS + " ms");
        c.send("{\"topic\":\"" + TOPIC + "\",\"event\":\"phx_leave\",\"payload\":{},\"ref\":\"L" + sent
                + "\",\"join_ref\":\"J" + sent + "\"}");
        ws.schedule(() -> rejoin(c, sent), rejoinAfterMs(joinTries));
    }

    synchronized void onClose(WsClients.Conn c) {
        if (c != conn) {
            return;
        }
        if (phase == 1) {
            phase = 2;
        } else {
            subscribedAt[2] = okAt[2] = pushAt[2] = 0; // closed again: SUBSCRIBED again later
            retries++;
        }
        socketTries = 1;
        ws.schedule(() -> open(reconnectTo), reconnectAfterMs(socketTries));
    }

    synchronized void onFrame(WsClients.Conn c, String frame) {
        if (c != conn) {
            return;
        }
        if (PhxFrames.isChange(frame)) {
            int row = PhxFrames.row(frame);
            if (row >= 0) {
                if (rows.get(row)) {
                    copies++;
                } else {
                    rows.set(row);
                    if (row >= arrivedAt.length) {
                        arrivedAt = java.util.Arrays.copyOf(arrivedAt, Math.max(row + 1, 2 * arrivedAt.length));
                    }
                    arrivedAt[row] = System.nanoTime();
                }
            }
        } else if (PhxFrames.isReply(frame) && ("J" + joins).equals(PhxFrames.ref(frame))) {
            if (PhxFrames.isOk(frame)) {
                okAt[phase] = System.nanoTime();
                joinTries = 0;
                subscribed();
            } else {
                retries++;
                joinTries++;
                int at = frame.indexOf("\"response\"");
                refusals.accept(at < 0 ? frame : frame.substring(at, Math.min(frame.length(), at + 160)));
                int expected = joins;
                ws.schedule(() -> rejoin(c, expected), rejoinAfterMs(joinTries));
            }
        } else if (PhxFrames.isSubscribed(frame)) {
            pushAt[phase] = System.nanoTime();
            subscribed();
        }
    }

    private synchronized void rejoin(WsClients.Conn c, int expected) {
        if (c == conn && joins == expected && c.channel.isActive()) {
            join();
        }
    }

    private void subscribed() {
        if (okAt[phase] != 0 && pushAt[phase] != 0 && subscribedAt[phase] == 0) {
            subscribedAt[phase] = Math.max(okAt[phase], pushAt[phase]);
            notifyAll();
            if (phase == 1) {
                onFirstSubscribed.run();
            }
        }
    }

    /** When the client was SUBSCRIBED on its first ({@code 1}) or its second ({@code 2}) socket, else 0. */
    synchronized long subscribedAt(int p) {
        return subscribedAt[p];
    }

    synchronized void awaitSubscribed(int p, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        while (subscribedAt[p] == 0) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new IllegalStateException("client " + index + " not SUBSCRIBED within " + timeoutMs + " ms");
            }
            wait(left);
        }
    }

    synchronized int retries() {
        return retries;
    }

    synchronized WsClients.Conn conn() {
        return conn;
    }

    /**
     * Counts the rows owed to this client and the owed ones it lacks (issue 39, issue 38 point 7):
     * every row whose INSERT started after its first SUBSCRIBED is owed, those committed while its
     * socket was away included; and when it had caught up: SUBSCRIBED again with every owed row
     * committed before that received (the replay), 0 when it never did.
     *
     * @return {owed, lost, owed rows committed while it was away, copies received}
     */
    synchronized long[] check(StormWriter writer, long killAt) {
        long owed = 0;
        long away = 0;
        lost = 0;
        long replayedAt = subscribedAt[2];
        for (int r = 0; r < writer.rows(); r++) {
            if (subscribedAt[1] == 0 || writer.startedAt(r) <= subscribedAt[1]) {
                continue;
            }
            owed++;
            boolean whileAway =
                    writer.committedAt(r) > killAt && (subscribedAt[2] == 0 || writer.startedAt(r) <= subscribedAt[2]);
            away += whileAway ? 1 : 0;
            if (!rows.get(r)) {
                lost++;
                if (firstLost < 0) {
                    firstLost = r;
                }
            } else if (subscribedAt[2] != 0 && writer.committedAt(r) <= subscribedAt[2]) {
                replayedAt = Math.max(replayedAt, arrivedAt[r]);
            }
        }
        caughtUpAt = lost == 0 ? replayedAt : 0;
        return new long[] {owed, lost, away, copies};
    }

    /** When it was SUBSCRIBED again with every owed row committed before that received; 0 when never (after {@link #check}). */
    synchronized long caughtUpAt() {
        return caughtUpAt;
    }

    synchronized long lost() {
        return lost;
    }

    synchronized String describeLoss() {
        return "client " + index + " lacks " + lost + " rows, the first row-" + firstLost + "; it received "
                + rows.cardinality() + " rows in all";
    }
}
