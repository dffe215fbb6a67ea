/* CuratorBench's output line. */

import java.util.List;
import java.util.Map;

/** The JSON of CuratorBench's output line: null, booleans, numbers (three decimals), lists, maps, strings. */
final class Json {
    private Json() {
    }

    static String json(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
            return v.toString();
        }
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                return "null";
            }
            return Double.toString(Math.round(d * 1000.0) / 1000.0);
        }
        if (v instanceof List) {
            StringBuilder sb = new StringBuilder("[");
            for (Object item : (List<?>) v) {
                if (sb.length() > 1) {
                    sb.append(',');
                }
                sb.append(json(item));
            }
            return sb.append(']').toString();
        }
        if (v instanceof Map) {
            StringBuilder sb = new StringBuilder("{");
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (sb.length() > 1) {
                    sb.append(',');
                }
                sb.append(json(e.getKey().toString())).append(':').append(json(e.getValue()));
            }
            return sb.append('}').toString();
        }
        String s = v.toString();
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                sb.append('\\').append(ch);
            } else if (ch < 0x20) {
                sb.append(String.format("\\u%04x", (int) ch));
            } else {
                sb.append(ch);
            }
        }
        return sb.append('"').toString();
    }
}
