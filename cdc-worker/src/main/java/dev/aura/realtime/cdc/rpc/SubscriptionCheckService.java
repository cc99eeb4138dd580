package dev.aura.realtime.cdc.rpc;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.platform.ProjectCatalog;
import dev.aura.realtime.cdc.platform.TableSecurity;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.io.IOException;
import java.sql.SQLException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers ws-front's join-time question "is this postgres_changes binding valid?" on
 * {@link Subjects#SUBSCRIPTION_CHECK} (queue group {@code aura-cdc-worker}: any replica,
 * leader or not, answers). Valid means: the project exists, the role is a client role or
 * {@code service_role}, the table is enabled for realtime (unless {@code *}), the filter parses,
 * names an existing column the role may select, tests only a primary-key column when the binding
 * is for DELETE on a table with row level security (a deleted row cannot be checked, so any other
 * filter would reveal values), and each value casts to that column's type in Postgres. So an
 * invalid filter fails at join, not at delivery. A {@code *} binding with a non-key filter on such a
 * table is valid, but its reply carries a notice: it gets no DELETE (docs/security.md).
 *
 * <p>The rules are {@link BindingRules}: project, table, column and grant lookups on platform SQL
 * ({@link ProjectCatalog}, {@link TableSecurity}); this class adds the NATS plumbing, admission
 * and the casts of filter values, which evaluate the tenant's type and runs as tenant SQL under the
 * subscriber's role ({@link TenantDb#casts}).
 *
 * <p>Threads: replies are computed on virtual threads, never on the jnats dispatcher thread; at
 * most {@code maxConcurrent} at once.
 */
public final class SubscriptionCheckService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionCheckService.class);
    static final String QUEUE = "aura-cdc-worker";
    /** How long a check waits to be admitted; ws-front gives up after SUBSCRIPTION_CHECK_TIMEOUT_MS (2 s). */
    private static final long ADMISSION_WAIT_MS = 1_000;

    private final Connection nats;
    private final BindingRules rules;
    private final TenantDb tenant;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private final Semaphore admission;
    private Dispatcher dispatcher;

    /**
     * @param maxConcurrent checks answered at once; the rest wait up to a second, then are told to
     *     retry, so a flood of joins cannot take the platform pool the shards also read the catalog on
     * @param identityReady whether a project's database identity is in place, provisioning it if not
     */
    public SubscriptionCheckService(
            Connection nats,
            ProjectCatalog projects,
            TableSecurity security,
            TenantDb tenant,
            int maxConcurrent,
            Predicate<String> identityReady) {
        this.nats = nats;
        this.admission = new Semaphore(maxConcurrent);
        this.rules = new BindingRules(BindingRules.Catalog.of(projects, security, identityReady));
        this.tenant = tenant;
    }

    public void start() {
        dispatcher = nats.createDispatcher();
        dispatcher.subscribe(Subjects.SUBSCRIPTION_CHECK, QUEUE, msg -> workers.execute(() -> answer(msg)));
    }

    private void answer(Message msg) {
        SubscriptionCheck.Reply reply;
        boolean admitted = false;
        try {
            admitted = admission.tryAcquire(ADMISSION_WAIT_MS, TimeUnit.MILLISECONDS);
            if (!admitted) {
                reply = new SubscriptionCheck.Reply(
                        false, "DatabaseUnavailable: too many subscription checks at once, try again", null);
            } else {
                SubscriptionCheck.Request req = mapper.readValue(msg.getData(), SubscriptionCheck.Request.class);
                reply = check(req);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (IOException e) {
            reply = new SubscriptionCheck.Reply(
                    false, "MalformedMessage: subscription check request is not valid JSON", null);
        } catch (SQLException | TenantDb.Unavailable e) {
            log.warn("[SubscriptionCheckDbFailed] subscription check failed on the database: {}", e.getMessage());
            reply = new SubscriptionCheck.Reply(
                    false, "DatabaseUnavailable: could not validate the subscription, try again", null);
        } catch (RuntimeException e) {
            // e.g. tenant SQL switched off between the status check and the cast
            log.warn("[SubscriptionCheckDbFailed] subscription check failed: {}", e.toString());
            reply = new SubscriptionCheck.Reply(
                    false, "DatabaseUnavailable: could not validate the subscription, try again", null);
        } finally {
            if (admitted) {
                admission.release();
            }
        }
        if (msg.getReplyTo() != null) {
            try {
                nats.publish(msg.getReplyTo(), mapper.writeValueAsBytes(reply));
            } catch (Exception e) {
                log.debug("could not reply to a subscription check: {}", e.toString());
            }
        }
    }

    private SubscriptionCheck.Reply check(SubscriptionCheck.Request req) throws SQLException, TenantDb.Unavailable {
        BindingRules.Outcome outcome = rules.judge(req);
        if (outcome instanceof BindingRules.Outcome.Refused refused) {
            return fail(refused.reason());
        }
        BindingRules.Outcome.Valid valid = (BindingRules.Outcome.Valid) outcome;
        if (valid.casts().isEmpty()) {
            return valid.reply();
        }
        if (tenant.status().off()) {
            return fail("DatabaseUnavailable: filter values cannot be checked on this server right now, try again");
        }
        for (BindingRules.Cast cast : valid.casts()) {
            String value = cast.value();
            ProjectCatalog.ColumnType type = cast.type();
            String column = cast.column();
            switch (tenant.casts(
                    new ProjectIdentity(req.projectId()), valid.castRole(), valid.schema(), value, type.formatted())) {
                case CASTS -> {}
                case INVALID -> {
                    return fail("PostgresChangesInvalidFilter: invalid value for filter " + column + ": '" + value
                            + "' is not a valid " + type.formatted());
                }
                case TIMED_OUT -> {
                    return fail("PostgresChangesInvalidFilter: invalid value for filter " + column + ": '" + value
                            + "' could not be checked within the time limit");
                }
                case BUSY -> {
                    return fail("DatabaseUnavailable: too many subscription checks at once, try again");
                }
            }
        }
        return valid.reply();
    }

    private static SubscriptionCheck.Reply fail(String reason) {
        return new SubscriptionCheck.Reply(false, reason, null);
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            nats.closeDispatcher(dispatcher);
        }
        workers.shutdownNow();
    }
}
