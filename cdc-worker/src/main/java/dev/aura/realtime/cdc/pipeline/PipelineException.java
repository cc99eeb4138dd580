package dev.aura.realtime.cdc.pipeline;

import dev.aura.realtime.cdc.slot.CdcReason;

/** Publishing failed; the slot must not be advanced past the changes accepted since the last flush. */
public final class PipelineException extends Exception {
    private final CdcReason reason;

    public PipelineException(CdcReason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public CdcReason reason() {
        return reason;
    }
}
