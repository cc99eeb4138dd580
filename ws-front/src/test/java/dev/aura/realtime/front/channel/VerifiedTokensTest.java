package dev.aura.realtime.front.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class VerifiedTokensTest {
    private final ChannelHarness h = new ChannelHarness();
    private final VerifiedTokens keys = new VerifiedTokens(h.verifier, h.clock);

    @Test
    void connectionsWithTheSameKeyShareOneVerifiedClaims() throws AuthException {
        String anon = h.token(Duration.ofMinutes(10));
        Claims first = keys.verify(anon);
        assertThat(keys.verify(anon)).isSameAs(first);
        assertThat(keys.verify(h.tokens.ttl(Duration.ofMinutes(10)).serviceRole(FrontFixture.PROJECT)))
                .isNotSameAs(first);
    }

    @Test
    void aCachedKeyPastItsExpiryFailsAsTheVerifierSays() throws AuthException {
        String anon = h.token(Duration.ofSeconds(30));
        keys.verify(anon);
        h.clock.advance(Duration.ofSeconds(42));
        assertThatThrownBy(() -> keys.verify(anon))
                .isInstanceOf(AuthException.class)
                .hasMessage("Token has expired 12 seconds ago");
    }

    @Test
    void aBadKeyIsNeverCached() {
        assertThatThrownBy(() -> keys.verify("garbage")).hasMessage("The token provided is not a valid JWT");
        assertThatThrownBy(() -> keys.verify("garbage")).hasMessage("The token provided is not a valid JWT");
    }

    /** Large valid tokens (claims of 200 KB each) are bounded in bytes, not only in count. */
    @Test
    void keptTokensAreBoundedInBytes() throws AuthException {
        java.util.List<String> big = new java.util.ArrayList<>();
        for (int i = 0; i < 30; i++) {
            java.util.Map<String, Object> claims =
                    new java.util.HashMap<>(h.tokens.ttl(Duration.ofMinutes(10)).claims("anon", FrontFixture.PROJECT));
            claims.put("pad", i + "x".repeat(200_000));
            big.add(h.tokens.withClaims(claims));
        }
        Claims first = keys.verify(big.get(0));
        for (String t : big) {
            keys.verify(t);
        }
        assertThat(keys.verify(big.get(29))).as("recent ones are kept").isSameAs(keys.verify(big.get(29)));
        assertThat(keys.verify(big.get(0)))
                .as("30 x 400 KB is over the 4 MiB bound: the first was dropped")
                .isNotSameAs(first);
    }
}
