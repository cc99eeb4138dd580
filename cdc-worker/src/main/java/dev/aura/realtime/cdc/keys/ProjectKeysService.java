package dev.aura.realtime.cdc.keys;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import dev.aura.realtime.cdc.catalog.ProjectKeysTable;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.common.auth.ApiKeys;
import dev.aura.realtime.common.auth.IssuerKeys;
import dev.aura.realtime.common.wire.ProjectKeys;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.io.IOException;
import java.net.URI;
import java.sql.SQLException;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers ws-front's {@link ProjectKeys} questions on {@link Subjects#PROJECT_KEYS} (queue group
 * {@code aura-cdc-worker}: any replica, leader or not): whose is the API key with this SHA-256
 * ({@code aura_platform.api_keys}, unrevoked), and which project issues tokens with this
 * {@code iss}, with which audience and public keys ({@code aura_platform.token_issuers}: the
 * inline keys and those its JWKS URL publishes, through {@link JwksFetcher}). Read from the
 * database at every question, so a change is answered at once; ws-front caches the answers
 * ({@code PROJECT_KEYS_CACHE_SECONDS}).
 *
 * <p>Threads: the database part runs on virtual threads, at most {@code maxConcurrent} at once
 * (over that, or when the database fails, no answer is sent: ws-front's question times out and
 * its client is told to try again); a JWKS fetch holds no thread and no admission while it runs.
 */
public final class ProjectKeysService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProjectKeysService.class);
    /** The queue group of every cdc-worker's answers to ws-front (as the other rpc services'). */
    static final String QUEUE = "aura-cdc-worker";

    private static final int MAX_ISSUER_CHARS = 2048;

    private final Connection nats;
    private final ProjectKeysTable table;
    private final JwksFetcher fetcher;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private final Semaphore admission;
    private Dispatcher dispatcher;

    public ProjectKeysService(Connection nats, ProjectKeysTable table, JwksFetcher fetcher, int maxConcurrent) {
        this.nats = nats;
        this.table = table;
        this.fetcher = fetcher;
        this.admission = new Semaphore(maxConcurrent);
    }

    public void start() {
        dispatcher = nats.createDispatcher();
        dispatcher.subscribe(Subjects.PROJECT_KEYS, QUEUE, msg -> {
            if (msg.getReplyTo() != null && admission.tryAcquire()) {
                workers.execute(() -> answer(msg));
            }
        });
    }

    private void answer(Message msg) {
        CompletableFuture<ProjectKeys.Answer> answer;
        try {
            answer = answer(mapper.readValue(msg.getData(), ProjectKeys.Request.class));
        } catch (IOException e) {
            log.debug("undecodable project keys request: {}", e.toString());
            return;
        } catch (SQLException | RuntimeException e) {
            log.warn("[{}] project keys question not answered: {}", LogCode.PROJECT_KEYS_DB_FAILED, e.toString());
            return;
        } finally {
            admission.release();
        }
        answer.thenAccept(a -> {
            try {
                nats.publish(msg.getReplyTo(), mapper.writeValueAsBytes(a));
            } catch (IOException | RuntimeException e) { // a closed connection: the asker times out
                log.debug("project keys answer not sent: {}", e.toString());
            }
        });
    }

    /** The answer to {@code req}: at once for a key, once the JWKS URL answered (or timed out) for an issuer. */
    CompletableFuture<ProjectKeys.Answer> answer(ProjectKeys.Request req) throws SQLException {
        if (req.apiKeyHash() != null) {
            byte[] hash = hash(req.apiKeyHash());
            ProjectKeysTable.KeyOwner owner = hash == null ? null : table.keyOwner(hash);
            ApiKeys.Kind kind = owner == null ? null : ApiKeys.Kind.ofType(owner.type());
            return CompletableFuture.completedFuture(
                    kind == null ? ProjectKeys.Answer.NONE : ProjectKeys.Answer.apiKey(owner.projectId(), kind.role()));
        }
        String iss = req.issuer();
        ProjectKeysTable.Issuer row =
                iss == null || iss.isEmpty() || iss.length() > MAX_ISSUER_CHARS ? null : table.issuer(iss);
        if (row == null) {
            return CompletableFuture.completedFuture(ProjectKeys.Answer.NONE);
        }
        List<JWK> inline = new ArrayList<>();
        String inlineError = null;
        if (row.jwks() != null) {
            try {
                inline.addAll(IssuerKeys.publicKeys(JWKSet.parse(row.jwks())).getKeys());
            } catch (ParseException e) {
                inlineError = "the inline keys are not a JWKS";
            }
        }
        String firstError = inlineError;
        if (row.jwksUrl() == null) {
            return CompletableFuture.completedFuture(issuerAnswer(row, inline, firstError));
        }
        URI url;
        try {
            url = URI.create(row.jwksUrl());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.completedFuture(issuerAnswer(row, inline, "the JWKS URL is not a URL"));
        }
        return fetcher.keys(row.id(), url, req.refresh()).thenApply(k -> {
            List<JWK> all = new ArrayList<>(inline);
            if (k.keys() != null) {
                all.addAll(k.keys().getKeys());
            }
            return issuerAnswer(row, all, firstError != null ? firstError : k.error());
        });
    }

    private ProjectKeys.Answer issuerAnswer(ProjectKeysTable.Issuer row, List<JWK> keys, String error) {
        JsonNode jwks = null;
        if (!keys.isEmpty()) {
            jwks = mapper.valueToTree(IssuerKeys.publicKeys(new JWKSet(keys)).toJSONObject(true));
        }
        return new ProjectKeys.Answer(row.projectId(), null, row.audience(), jwks, error);
    }

    /** The 32 bytes of a hex SHA-256, or null for any other text. */
    private static byte[] hash(String hex) {
        if (hex.length() != 64) {
            return null;
        }
        try {
            return HexFormat.of().parseHex(hex);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            try {
                nats.closeDispatcher(dispatcher);
            } catch (RuntimeException e) { // the connection is already closed
                log.debug("closing the project keys dispatcher: {}", e.toString());
            }
            dispatcher = null;
        }
        workers.shutdownNow();
        fetcher.close();
    }
}
