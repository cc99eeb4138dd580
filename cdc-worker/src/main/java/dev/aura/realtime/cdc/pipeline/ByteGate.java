package dev.aura.realtime.cdc.pipeline;

/** Bytes a shard may hold; one item larger than the capacity is admitted alone. */
final class ByteGate {
    private final long capacity;
    private long used;

    ByteGate(long capacity) {
        this.capacity = capacity;
    }

    synchronized void acquire(long n) throws InterruptedException {
        while (used > 0 && used + n > capacity) {
            wait();
        }
        used += n;
    }

    synchronized void release(long n) {
        used -= n;
        notifyAll();
    }
}
