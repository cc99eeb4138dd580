package dev.aura.realtime.cdc.failure;

/**
 * One change cannot be delivered as it is, for a reason that is that change's alone ({@link
 * RowFault}); thrown where our own code finds it (a subject too long, a value nested too deep).
 * Its message is our own words, never the tenant's data.
 */
public final class RowFaultException extends Exception {
    private final RowFault fault;

    public RowFaultException(RowFault fault, String ourWords) {
        super(ourWords, null, false, false);
        this.fault = fault;
    }

    public RowFault fault() {
        return fault;
    }
}
