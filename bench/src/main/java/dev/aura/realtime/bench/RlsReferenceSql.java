package dev.aura.realtime.bench;

/**
 * The SQL of figure 5's reference method ({@link RlsBench}): walrus's shape, written here, one
 * function call per change. Each text takes {@code %1$s} the project schema and {@code %2$s} the
 * table.
 */
final class RlsReferenceSql {
    private RlsReferenceSql() {}

    /**
     * The reference method for one change (walrus's shape, our own text): {@code %1$s} the project
     * schema, {@code %2$s} the table. SECURITY INVOKER: the row is read under the group's role and
     * claims, so the table's policy decides.
     */
    static final String REFERENCE_SQL = """
            CREATE FUNCTION %1$s.bench_ref_apply_rls(change_id bigint) RETURNS uuid[]
            LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $fn$
            DECLARE
              groups %1$s.bench_ref_claims_groups[];
              g %1$s.bench_ref_claims_groups;
              visible boolean;
              allowed uuid[] := '{}';
            BEGIN
              -- the subscriptions of the change's table, one entry per distinct (role, claims)
              groups := ARRAY(SELECT x FROM %1$s.bench_ref_claims_groups x
                              WHERE x.entity = '%1$s.%2$s'::regclass);
              FOREACH g IN ARRAY groups LOOP
                PERFORM set_config('role', g.claims_role, true),
                        set_config('request.jwt.claims', g.claims::text, true);
                -- the row by its primary key, under the group's role and claims: RLS decides
                SELECT EXISTS (SELECT 1 FROM %1$s.%2$s t WHERE t.id = change_id) INTO visible;
                PERFORM set_config('role', 'none', true);
                IF visible THEN
                  allowed := allowed || g.sub_ids;
                END IF;
              END LOOP;
              RETURN allowed;
            END $fn$""";

    /**
     * walrus's own loop, for comparison (informational): the same call, but one check per
     * <i>subscription</i> (walrus loops over the distinct roles, then over every subscription of
     * the role: {@code set_config} role and claims, execute the row check), as Supabase's docs
     * describe ("100 users subscribed ... a single insert ... 100 reads").
     */
    static final String REFERENCE_EACH_SQL = """
            CREATE FUNCTION %1$s.bench_ref_apply_rls_each(change_id bigint) RETURNS uuid[]
            LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $fn$
            DECLARE
              subs %1$s.bench_ref_subscriptions[];
              sub %1$s.bench_ref_subscriptions;
              visible boolean;
              allowed uuid[] := '{}';
            BEGIN
              subs := ARRAY(SELECT x FROM %1$s.bench_ref_subscriptions x
                            WHERE x.entity = '%1$s.%2$s'::regclass ORDER BY x.claims_role);
              FOREACH sub IN ARRAY subs LOOP
                PERFORM set_config('role', sub.claims_role, true),
                        set_config('request.jwt.claims', sub.claims::text, true);
                SELECT EXISTS (SELECT 1 FROM %1$s.%2$s t WHERE t.id = change_id) INTO visible;
                PERFORM set_config('role', 'none', true);
                IF visible THEN
                  allowed := allowed || sub.subscription_id;
                END IF;
              END LOOP;
              RETURN allowed;
            END $fn$""";
}
