/* What a CuratorBench scenario measured; the output line adds the process-wide extras. */

import java.util.LinkedHashMap;
import java.util.Map;

final class Result {
    long ops;
    double seconds;
    long[] latNs = new long[0];
    Boolean fifoOk;
    long cpuNs;
    final Map<String, Object> extra = new LinkedHashMap<>();
}
