package dev.aura.realtime.front.channel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.front.broadcast.Broadcasts;
import dev.aura.realtime.front.broadcast.PrivateChannels;
import dev.aura.realtime.front.presence.PresenceExtension;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.quota.ProjectQuotas;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.function.Consumer;

/**
 * A client's {@code presence} push ({@code track}, {@code untrack}) on a joined channel, admitted
 * by the channel layer before presence handles it through its extension (docs/design.md D5): the
 * connection's presence rate ({@code WS_MAX_PRESENCE_EVENTS_PER_SECOND}), the track payload's size
 * ({@code WS_MAX_PRESENCE_PAYLOAD_BYTES}), the project's message and presence rates, a private
 * channel's write check. Replica-wide; called on the channel's event loop.
 */
final class PresencePushes {
    private final PresenceExtension presence;
    private final PrivateChannels privateChannels;
    private final ProjectQuotas quotas;
    private final ObjectMapper mapper;
    private final int maxTrackBytes;
    private final Clock clock;

    PresencePushes(
            PresenceExtension presence,
            PrivateChannels privateChannels,
            ProjectQuotas quotas,
            ObjectMapper mapper,
            int maxTrackBytes,
            Clock clock) {
        this.presence = presence;
        this.privateChannels = privateChannels;
        this.quotas = quotas;
        this.mapper = mapper;
        this.maxTrackBytes = maxTrackBytes;
        this.clock = clock;
    }

    /**
     * @param close closes the channel with a {@code system} error (a rate is spent)
     */
    void push(Membership m, PhoenixMessage.PresencePush p, Consumer<String> close) {
        if (!m.recipient().tryPresenceEvent(clock.millis())) {
            close.accept(Reasons.TOO_MANY_PRESENCE_MESSAGES);
            return;
        }
        long bytes = trackBytes(p);
        if (bytes > maxTrackBytes) {
            if (p.ref() != null) {
                m.reply(p.ref(), "error", Replies.reason(Reasons.presencePayloadTooLarge(maxTrackBytes)));
            }
            return;
        }
        if (!quotas.tryMessage(m.projectId(), bytes)) {
            close.accept(Reasons.PROJECT_TOO_MANY_MESSAGES);
            return;
        }
        if (!quotas.tryPresence(m.projectId())) {
            close.accept(Reasons.PROJECT_TOO_MANY_PRESENCE_MESSAGES);
            return;
        }
        privateChannels.whenWritable(
                m,
                "presence",
                dev.aura.realtime.common.wire.WireJson.toBytes(p.payload()).length,
                () -> {
                    if (m.active()) {
                        presence.onPresence(m, p);
                    }
                },
                refusal -> Broadcasts.refuse(m, p.ref(), refusal));
    }

    /**
     * The serialised size of a {@code track}'s state (0 for other presence events). Bounded by
     * {@code WS_MAX_PRESENCE_PAYLOAD_BYTES}: every member of the channel on every replica receives
     * it in each {@code presence_state}, and it sits in the presence bucket.
     */
    private long trackBytes(PhoenixMessage.PresencePush p) {
        JsonNode meta = p.payload().get("payload");
        if (!"track".equals(p.payload().path("event").asText()) || meta == null) {
            return 0;
        }
        CountingSink sink = new CountingSink();
        try {
            mapper.writeValue(sink, meta);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a parsed tree always serialises; the sink never fails
        }
        return sink.count;
    }

    /** Counts bytes without keeping them. */
    private static final class CountingSink extends OutputStream {
        long count;

        @Override
        public void write(int b) {
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            count += len;
        }
    }
}
