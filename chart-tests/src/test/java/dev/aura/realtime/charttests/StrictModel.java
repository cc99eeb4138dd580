package dev.aura.realtime.charttests;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Collection;
import java.util.Map;

/**
 * "Fail on unknown fields" for fabric8 models. They never reject an unknown field: Jackson's
 * any-setter puts it into {@code additionalProperties}. So a misspelt or misplaced key
 * ({@code readinesProbe}, {@code securityContext.fsGroup} on a container) shows up there; this
 * walks every model object of a parsed document and fails naming the path.
 */
final class StrictModel {
    private StrictModel() {}

    static void assertNoUnknownFields(Object root, String where) {
        walk(root, where);
    }

    private static void walk(Object node, String path) {
        if (node == null) {
            return;
        }
        if (node instanceof Collection<?> c) {
            int i = 0;
            for (Object o : c) {
                walk(o, path + "[" + i++ + "]");
            }
            return;
        }
        if (node instanceof Map<?, ?> m) {
            m.forEach((k, v) -> walk(v, path + "." + k));
            return;
        }
        if (!node.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return; // String, Integer, Boolean, enums
        }
        for (Method getter : node.getClass().getMethods()) {
            if (getter.getParameterCount() != 0
                    || Modifier.isStatic(getter.getModifiers())
                    || !getter.getName().startsWith("get")
                    || getter.getName().equals("getClass")) {
                continue;
            }
            Object value = invoke(getter, node);
            if (getter.getName().equals("getAdditionalProperties")) {
                if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    throw new AssertionError(
                            path + ": fields unknown to " + node.getClass().getSimpleName() + ": " + extra.keySet());
                }
                continue;
            }
            walk(value, path + "." + decapitalize(getter.getName().substring(3)));
        }
    }

    private static Object invoke(Method getter, Object target) {
        try {
            return getter.invoke(target);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("cannot read " + getter, e);
        }
    }

    private static String decapitalize(String s) {
        return s.isEmpty() ? s : Character.toLowerCase(s.charAt(0)) + s.substring(1);
    }
}
