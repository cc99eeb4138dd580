package dev.aura.realtime.cdc.decode;

/** A decoding row that is not the wal2json v2 JSON the slot reader asked for. */
public final class MalformedWalRowException extends Exception {
    public MalformedWalRowException(String message) {
        super(message);
    }
}
