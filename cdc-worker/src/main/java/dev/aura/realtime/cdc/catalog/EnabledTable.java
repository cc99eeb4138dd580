package dev.aura.realtime.cdc.catalog;

/**
 * A table enabled for realtime: one row of {@code aura_platform.realtime_tables} joined with its project.
 *
 * @param projectId project uuid
 * @param schemaName the project's schema (e.g. {@code project_<uuid>})
 * @param tableName table name, unquoted
 */
public record EnabledTable(String projectId, String schemaName, String tableName) {}
