package dev.aura.realtime.bench;

/**
 * A reader of each round's backlog without the product: the ceiling the stream source is held to
 * (figure 1: CDC stream ≥ 0.9× the ceiling, on the median of the rounds). {@link CdcRounds} calls
 * {@link #prepare} before every backlog is written and {@link #drainSeconds} after it, in every
 * round, so each round's ratio uses a ceiling measured on the same backlog. The first ceiling given
 * to {@link CdcRounds} is the figure's baseline; any others are reported beside it in the notes.
 */
interface BacklogCeiling {
    /** What the ceiling is, for the report, e.g. "pg_recvlogical". */
    String label();

    /** Creates what retains the backlog for this reader (its slot); called before the backlog is written. */
    void prepare() throws Exception;

    /**
     * Reads the backlog until its {@code inserts} inserts arrived, then releases what
     * {@link #prepare} created. @return the seconds it took (from the start of the read)
     */
    double drainSeconds(int inserts) throws Exception;

    /** What the last {@link #drainSeconds} saw, for the round's note (empty when nothing to add). */
    default String lastDetail() {
        return "";
    }
}
