package dev.aura.realtime.common.filter;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.util.ArrayList;
import java.util.List;

/**
 * A compiled {@code like}/{@code ilike}/{@code match}/{@code imatch} pattern with a bounded cost
 * (docs/protocol.md "Filters"). Tenant patterns are hostile, so every pattern runs on RE2/J, whose
 * matching time is linear in the text (no backtracking), and the work of one test is bounded:
 *
 * <ul>
 *   <li>a pattern has at most {@value #MAX_PATTERN_CHARS} characters;
 *   <li>its cost, the pattern length times the product of its counted repetitions
 *       ({@code {n}}, {@code {n,}}, {@code {n,m}}: what RE2 unrolls), is at most
 *       {@value #MAX_COST} (else refused at join);
 *   <li>a text is tested only when its length times the cost is at most {@value #MAX_STEPS}: a
 *       longer value makes the condition unknown, which matches nothing (also under {@code not.}),
 *       as NULL does.
 * </ul>
 *
 * Immutable and thread-safe.
 */
public final class TextPattern {
    public static final int MAX_PATTERN_CHARS = 256;
    public static final long MAX_COST = 4096;
    public static final long MAX_STEPS = 4_000_000;

    private final Pattern pattern;
    private final boolean whole;
    private final long cost;
    /**
     * A case-sensitive {@code like} pattern without {@code _}: its literal runs between
     * {@code %}s, tested with {@code startsWith}/{@code indexOf}/{@code endsWith} (leftmost
     * matching of each run is exact for such patterns); null otherwise.
     */
    private final List<String> runs;

    private TextPattern(Pattern pattern, boolean whole, long cost, List<String> runs) {
        this.pattern = pattern;
        this.whole = whole;
        this.cost = Math.max(1, cost);
        this.runs = runs;
    }

    /**
     * @throws FilterException when the pattern is too long, too costly or not valid
     */
    static TextPattern compile(FilterOp op, String text) throws FilterException {
        if (text.length() > MAX_PATTERN_CHARS) {
            throw new FilterException(
                    "pattern of " + op.wire() + " is longer than " + MAX_PATTERN_CHARS + " characters");
        }
        try {
            return switch (op) {
                case LIKE -> like(text, Pattern.DOTALL, true);
                case ILIKE -> like(text, Pattern.DOTALL | Pattern.CASE_INSENSITIVE, false);
                case MATCH -> regex(op, text, Pattern.DOTALL);
                case IMATCH -> regex(op, text, Pattern.DOTALL | Pattern.CASE_INSENSITIVE);
                case EQ, NEQ, LT, LTE, GT, GTE, IN, IS, ISDISTINCT ->
                    throw new IllegalArgumentException(op + " has no pattern");
            };
        } catch (PatternSyntaxException e) {
            throw new FilterException("invalid regular expression for " + op.wire() + ": " + e.getDescription());
        }
    }

    /** @param literalRuns whether a pattern without {@code _} is tested by its literal runs */
    private static TextPattern like(String text, int flags, boolean literalRuns) throws FilterException {
        Pattern pattern = Pattern.compile(likeToRegex(text), flags);
        return new TextPattern(pattern, true, text.length(), literalRuns ? percentRuns(text) : null);
    }

    private static TextPattern regex(FilterOp op, String text, int flags) throws FilterException {
        long cost = regexCost(text);
        if (cost > MAX_COST) {
            throw new FilterException("pattern of " + op.wire() + " is too complex (cost " + cost + ", at most "
                    + MAX_COST + "): use fewer or smaller counted repetitions");
        }
        return new TextPattern(Pattern.compile(text, flags), false, cost, null);
    }

    /**
     * @return TRUE or FALSE, or null when the text is too long to test within the step bound
     */
    Boolean test(String value) {
        if ((long) value.length() * cost > MAX_STEPS) {
            return null;
        }
        if (runs != null) {
            return matchRuns(value);
        }
        var m = pattern.matcher(value);
        return whole ? m.matches() : m.find();
    }

    /** The literal runs of a LIKE pattern split at {@code %} (unescaped), or null when it has an {@code _}. */
    private static List<String> percentRuns(String like) {
        List<String> out = new ArrayList<>();
        StringBuilder run = new StringBuilder();
        for (int i = 0; i < like.length(); i++) {
            char c = like.charAt(i);
            if (c == '\\') {
                run.append(like.charAt(++i)); // a trailing escape was refused by likeToRegex
            } else if (c == '_') {
                return null;
            } else if (c == '%') {
                out.add(run.toString());
                run.setLength(0);
            } else {
                run.append(c);
            }
        }
        out.add(run.toString());
        return List.copyOf(out);
    }

    /** runs[0] a prefix, runs[last] a suffix, the ones between found in order, without overlap. */
    private boolean matchRuns(String value) {
        int last = runs.size() - 1;
        if (last == 0) {
            return value.equals(runs.get(0));
        }
        String head = runs.get(0);
        String tail = runs.get(last);
        if (value.length() < head.length() + tail.length() || !value.startsWith(head) || !value.endsWith(tail)) {
            return false;
        }
        int from = head.length();
        int end = value.length() - tail.length();
        for (int i = 1; i < last; i++) {
            String run = runs.get(i);
            int at = value.indexOf(run, from);
            if (at < 0 || at + run.length() > end) {
                return false;
            }
            from = at + run.length();
        }
        return true;
    }

    /** LIKE to an RE2 regex: {@code %} any run, {@code _} any one character, backslash escapes the next. */
    static String likeToRegex(String like) throws FilterException {
        StringBuilder out = new StringBuilder(like.length() * 2);
        StringBuilder literal = new StringBuilder();
        for (int i = 0; i < like.length(); i++) {
            char c = like.charAt(i);
            if (c == '\\') {
                if (i + 1 == like.length()) {
                    throw new FilterException("LIKE pattern must not end with escape character");
                }
                literal.append(like.charAt(++i));
                continue;
            }
            if (c == '%' || c == '_') {
                flush(out, literal);
                out.append(c == '%' ? ".*" : ".");
            } else {
                literal.append(c);
            }
        }
        flush(out, literal);
        return out.toString();
    }

    private static void flush(StringBuilder out, StringBuilder literal) {
        if (!literal.isEmpty()) {
            out.append(Pattern.quote(literal.toString()));
            literal.setLength(0);
        }
    }

    /** Pattern length times the product of every counted repetition's largest count (conservative). */
    static long regexCost(String regex) {
        long cost = regex.length();
        for (int i = 0; i < regex.length(); i++) {
            char c = regex.charAt(i);
            if (c == '\\') {
                i++;
                continue;
            }
            if (c != '{') {
                continue;
            }
            int close = regex.indexOf('}', i);
            if (close < 0) {
                break;
            }
            String body = regex.substring(i + 1, close);
            if (!body.matches("\\d{1,9}(,\\d{0,9})?")) {
                continue;
            }
            int comma = body.indexOf(',');
            long low = Long.parseLong(comma < 0 ? body : body.substring(0, comma));
            long high = comma < 0 || comma == body.length() - 1 ? low + 1 : Long.parseLong(body.substring(comma + 1));
            cost = Math.multiplyExact(cost, Math.max(1, Math.max(low, high)));
            if (cost > MAX_COST) {
                return cost;
            }
            i = close;
        }
        return cost;
    }
}
