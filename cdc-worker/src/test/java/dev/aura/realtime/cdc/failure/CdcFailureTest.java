package dev.aura.realtime.cdc.failure;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The classification of Postgres errors into {@link CdcReason}s, on the servers' exact message texts. */
class CdcFailureTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            ERROR: could not access file "wal2json": No such file or directory                      | 58P01 | wal2json_missing        | false
            ERROR: library "wal2json" may not be used as an output plugin                           | 42501 | wal2json_not_allowed    | false
            ERROR: can no longer get changes from replication slot "s"                             | 55000 | slot_lost               | true
            ERROR: replication slot "s" cannot be advanced  Detail: This slot has never previously reserved WAL, or it has been invalidated. | 55000 | slot_lost | true
            ERROR: replication slot "aura_cdc_slot" is active for PID 4242                          | 55006 | slot_active_elsewhere   | true
            ERROR: logical decoding requires wal_level >= logical                                   | 55000 | wal_level_not_logical   | false
            ERROR: must be superuser or replication role to use replication slots                   | 42501 | no_replication_privilege| false
            FATAL: password authentication failed for user "x"                                     | 28P01 | postgres_auth_failed    | false
            Connection to 127.0.0.1:5432 refused                                                    | 08001 | postgres_unavailable    | true
            FATAL: terminating connection due to administrator command                             | 57P01 | postgres_unavailable    | true
            ERROR: division by zero                                                                 | 22012 | error                   | true
            """)
    void postgresErrorsAreClassifiedByTheirMessageAndState(
            String message, String state, String code, boolean retriable) {
        CdcFailure f = CdcFailure.classify(new SQLException(message.strip(), state.strip()));
        assertThat(f.reason().code()).isEqualTo(code.strip());
        assertThat(f.retriable()).isEqualTo(retriable);
        assertThat(f.getMessage()).contains(message.strip());
    }

    @Test
    void aNullMessageOrStateIsAnError() {
        assertThat(CdcFailure.classify(new SQLException()).reason()).isEqualTo(CdcReason.ERROR);
    }
}
