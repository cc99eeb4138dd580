package dev.aura.realtime.front.fanout;

/**
 * The identity of a channel inside ws-front and on NATS (local index, history, presence keys,
 * broadcast subjects): its name for a public channel, {@link #PRIVATE_PREFIX} and its name for a
 * private one. Public and private channels of the same name are separate, as in Supabase: a
 * public member never receives what is sent on the private channel. No topic a client may join
 * contains NUL ({@code Topics.joinRefusal} refuses it), so no public name can equal a private key.
 */
public final class ChannelKeys {
    /** Starts every private channel's key; contains NUL, which joinable names never do. */
    public static final String PRIVATE_PREFIX = "\u0000private:";

    private ChannelKeys() {}

    public static String of(String name, boolean privateChannel) {
        return privateChannel ? PRIVATE_PREFIX + name : name;
    }

    /** The channel's name (what clients see in the topic) of a key made by {@link #of}. */
    public static String name(String key) {
        return key.startsWith(PRIVATE_PREFIX) ? key.substring(PRIVATE_PREFIX.length()) : key;
    }
}
