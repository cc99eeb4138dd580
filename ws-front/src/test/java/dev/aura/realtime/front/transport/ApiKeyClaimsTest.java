package dev.aura.realtime.front.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ApiKeyClaimsTest {
    private final ChannelHarness h = new ChannelHarness();
    private final ApiKeyClaims keys = new ApiKeyClaims(h.verifier, h.clock);

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
}
