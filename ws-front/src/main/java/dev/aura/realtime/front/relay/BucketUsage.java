package dev.aura.realtime.front.relay;

import java.util.Map;

/** This replica's bytes per project in one KV bucket, for the usage report (docs/design.md D8). */
public interface BucketUsage {
    /** Project id to its bytes now; projects without any are left out. */
    Map<String, Long> totals();

    /** No bytes anywhere (tests, and a replica without the bucket). */
    BucketUsage NONE = Map::of;
}
