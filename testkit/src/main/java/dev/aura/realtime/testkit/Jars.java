package dev.aura.realtime.testkit;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Locates the runnable jars of the two binaries, built by {@code mvn -DskipTests package}.
 *
 * <p>The repository root is found by walking up from the working directory to the first
 * directory whose {@code pom.xml} lists {@code <module>common</module>}, so the lookup works from
 * any module directory Maven runs tests in.
 */
public final class Jars {
    private Jars() {}

    /**
     * Returns {@code cdc-worker/target/cdc-worker.jar}.
     *
     * @return absolute path of an existing jar
     * @throws IllegalStateException if the repository root or the jar cannot be found
     */
    public static Path cdcWorker() {
        return existing("cdc-worker/target/cdc-worker.jar");
    }

    /**
     * Returns {@code ws-front/target/ws-front.jar}.
     *
     * @return absolute path of an existing jar
     * @throws IllegalStateException if the repository root or the jar cannot be found
     */
    public static Path wsFront() {
        return existing("ws-front/target/ws-front.jar");
    }

    /**
     * Returns the repository root directory.
     *
     * @return absolute path of the directory holding the root pom.xml
     * @throws IllegalStateException if no ancestor of the working directory is the root
     */
    public static Path repoRoot() {
        return RepoRoot.find();
    }

    private static Path existing(String relative) {
        Path jar = RepoRoot.find().resolve(relative);
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " does not exist: run mvn -DskipTests package first"
                    + " (JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64)");
        }
        return jar;
    }
}
