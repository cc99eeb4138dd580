package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Finds the repository root: the nearest ancestor of the working directory whose pom.xml lists the common module. */
final class RepoRoot {
    private RepoRoot() {}

    static Path find() {
        Path start = Path.of(System.getProperty("user.dir")).toAbsolutePath().normalize();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            Path pom = dir.resolve("pom.xml");
            if (Files.isRegularFile(pom) && listsCommonModule(pom)) {
                return dir;
            }
        }
        throw new IllegalStateException(
                "cannot find the aura-realtime repository root (a pom.xml listing <module>common</module>)"
                        + " above the working directory " + start);
    }

    private static boolean listsCommonModule(Path pom) {
        try {
            return Files.readString(pom).contains("<module>common</module>");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + pom, e);
        }
    }
}
