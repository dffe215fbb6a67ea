/* CuratorBench's latency samples: a growable array of nanoseconds, one per thread (no sharing). */

import java.util.Arrays;
import java.util.List;

/** A growable array of nanosecond samples, one per thread (no sharing). */
final class Samples {
    long[] v = new long[256];
    int n;

    void add(long x) {
        if (n == v.length) {
            v = Arrays.copyOf(v, n * 2);
        }
        v[n++] = x;
    }

    static long[] merge(List<Samples> all) {
        int total = 0;
        for (Samples s : all) {
            total += s.n;
        }
        long[] out = new long[total];
        int at = 0;
        for (Samples s : all) {
            System.arraycopy(s.v, 0, out, at, s.n);
            at += s.n;
        }
        Arrays.sort(out);
        return out;
    }
}
