package dev.aura.realtime.cdc.keys;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Whether a host is on the public internet, for {@link JwksFetcher}: a project's JWKS URL must not
 * make the worker fetch from loopback, private (RFC 1918, IPv6 unique local), link-local (also
 * cloud metadata at 169.254.169.254), shared (RFC 6598), unspecified or multicast addresses.
 */
final class PublicAddresses {
    /** The host resolves to an address that is not public. */
    static final class NotPublic extends IOException {
        NotPublic() {
            super("the host resolves to a non-public address (PROJECT_JWKS_PRIVATE_ADDRESSES is off)", null);
        }
    }

    private PublicAddresses() {}

    /**
     * @throws NotPublic when any address of {@code host} is not public
     * @throws UnknownHostException when it does not resolve
     */
    static void require(String host) throws IOException {
        if (host == null) {
            throw new UnknownHostException("no host");
        }
        for (InetAddress a : InetAddress.getAllByName(host)) {
            if (!isPublic(a)) {
                throw new NotPublic();
            }
        }
    }

    static boolean isPublic(InetAddress a) {
        if (a.isLoopbackAddress()
                || a.isSiteLocalAddress()
                || a.isLinkLocalAddress()
                || a.isAnyLocalAddress()
                || a.isMulticastAddress()) {
            return false;
        }
        byte[] b = a.getAddress();
        if (a instanceof Inet4Address) {
            int first = b[0] & 0xFF;
            int second = b[1] & 0xFF;
            boolean shared = first == 100 && second >= 64 && second < 128; // RFC 6598
            boolean thisNetwork = first == 0;
            return !shared && !thisNetwork;
        }
        if (a instanceof Inet6Address) {
            boolean uniqueLocal = (b[0] & 0xFE) == 0xFC; // fc00::/7
            return !uniqueLocal;
        }
        return true;
    }
}
