package dev.aura.realtime.bench;

/**
 * Figure 1's streaming ceiling (issue 25): {@link StreamCeiling}'s two replication clients that
 * share no code with the product, {@code pg_recvlogical} to {@code /dev/null} and a blocking
 * pgjdbc {@code read()} loop, each on its own slot over the round's backlog; the faster of the
 * two is the round's ceiling, and both readings go into the round's note.
 */
final class IndependentCeiling implements BacklogCeiling {
    private final Stack s;
    private final String table;
    private StreamCeiling pending;
    private String lastDetail = "";

    IndependentCeiling(Stack s, String table) {
        this.s = s;
        this.table = table;
    }

    @Override
    public String label() {
        return "independent streaming ceiling (faster of pg_recvlogical and a blocking pgjdbc reader)";
    }

    @Override
    public void prepare() {
        pending = StreamCeiling.prepare(s.pg, s.schema + "." + table);
    }

    @Override
    public double drainSeconds(int inserts) throws Exception {
        StreamCeiling.Result r = pending.measure(inserts);
        pending = null;
        lastDetail = r.fasterName() + " faster; " + r.summary();
        return inserts / r.ceiling();
    }

    @Override
    public String lastDetail() {
        return lastDetail;
    }
}
