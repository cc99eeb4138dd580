package dev.aura.realtime.cdc.pipeline;

import dev.aura.realtime.cdc.failure.CdcFailure;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

/** What a {@link ShardedPipeline} shard's queue holds: batches of changes, flush markers between them, and new readings. */
sealed interface ShardItem permits ShardItem.Batch, ShardItem.Flush, ShardItem.NewReading {
    /** Changes handed over together (one lock and one wake-up instead of one per change). */
    record Batch(List<BatchPublisher.Work> works, long cost, CompletableFuture<Long> registryPosition)
            implements ShardItem {}

    /** The reader starts reading again ({@link ShardedPipeline#newReading}): what a shard skipped before it is read again. */
    record NewReading() implements ShardItem {}

    /** Completed by the shard once every change queued before it was processed. */
    final class Flush implements ShardItem {
        private final CountDownLatch done = new CountDownLatch(1);
        private volatile CdcFailure failure;

        void complete(CdcFailure outcome) {
            failure = outcome;
            done.countDown();
        }

        boolean isDone() {
            return done.getCount() == 0;
        }

        /** @return the shard's first failure since the previous flush, or null */
        CdcFailure await() throws InterruptedException {
            done.await();
            return failure;
        }
    }
}
