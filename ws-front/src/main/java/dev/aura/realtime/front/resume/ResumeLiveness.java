package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.wire.Subjects;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a resume record's channel is still live on the replica that owns it (docs/design.md R).
 * A record that is not parked is written by a live channel, or was, by a replica that died without
 * parking it (killed). Before a join on another replica adopts its sub ids, it asks the owner on
 * {@link Subjects#resumeLive}: an owner that still holds one of those sub ids in an active channel
 * answers {@code live} (a second tab of the same user, topic and bindings: it gets sub ids of its
 * own, else both tabs would share the entries and one tab's leave would delete the other's). A
 * killed replica has no subscription, so NATS answers "no responders" at once: adopt. An owner
 * that does not answer within the timeout is treated as gone as well.
 *
 * <p>Threads: {@link #liveElsewhere} blocks (call it on a virtual thread); answers run on the
 * dispatcher's thread and only read the holder predicate.
 */
public final class ResumeLiveness implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ResumeLiveness.class);
    /** Most bytes of a question: a record's sub ids (UUIDs), at most one per binding of a channel. */
    static final int MAX_QUESTION_BYTES = 64 * 1024;

    static final String LIVE = "live";
    static final String GONE = "gone";

    private final Connection nats;
    private final String instanceId;
    private final Predicate<String> holds;
    private final Duration timeout;
    private Dispatcher dispatcher;

    /**
     * @param holds whether an active local channel holds a binding with this sub id
     * @param timeout how long an owner may take to answer before it counts as gone
     */
    public ResumeLiveness(Connection nats, String instanceId, Predicate<String> holds, Duration timeout) {
        this.nats = nats;
        this.instanceId = instanceId;
        this.holds = holds;
        this.timeout = timeout;
    }

    /** Answers the other replicas' questions about this replica's records. */
    public void start() {
        dispatcher = nats.createDispatcher(this::answer);
        dispatcher.subscribe(Subjects.resumeLive(instanceId));
    }

    private void answer(Message m) {
        if (m.getReplyTo() == null) {
            return;
        }
        byte[] data = m.getData();
        boolean live = false;
        if (data != null && data.length <= MAX_QUESTION_BYTES) {
            for (String subId : new String(data, StandardCharsets.UTF_8).split(",")) {
                if (!subId.isEmpty() && holds.test(subId)) {
                    live = true;
                    break;
                }
            }
        }
        nats.publish(m.getReplyTo(), (live ? LIVE : GONE).getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Whether {@code owner} (another replica) still holds one of {@code subIds} live. False for this
     * replica itself (the caller checks its own channels), a missing owner, no responder (the owner
     * is gone), a timeout or an error. Blocking.
     */
    public boolean liveElsewhere(String owner, List<String> subIds) {
        if (owner == null || owner.equals(instanceId) || subIds.isEmpty()) {
            return false;
        }
        byte[] question = String.join(",", subIds).getBytes(StandardCharsets.UTF_8);
        if (question.length > MAX_QUESTION_BYTES) {
            return false;
        }
        try {
            Message reply = nats.request(Subjects.resumeLive(owner), question, timeout);
            if (reply == null || reply.isStatusMessage() || reply.getData() == null) {
                return false; // timed out, or no responders: the owner is gone
            }
            return LIVE.equals(new String(reply.getData(), StandardCharsets.US_ASCII));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (RuntimeException e) {
            // jnats reports "no responders" as an exception on some paths: the owner is gone
            log.debug("resume liveness of {}: {}", owner, e.toString());
            return false;
        }
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            nats.closeDispatcher(dispatcher);
        }
    }
}
