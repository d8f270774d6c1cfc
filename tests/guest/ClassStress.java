import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Loads the classes of every jar in DIR on THREADS threads for SECONDS seconds, in a fresh
 * class loader each round, and prints how many it loaded: the work of a Spark daemon's start
 * (zip directories read, classes defined, the JIT compiling the readers) on every vCPU at once,
 * where the guest's JVMs once died of SIGSEGV in C1-compiled code (issue 57). A class that
 * cannot link is counted, not fatal. Usage: java -cp DIR ClassStress JARS SECONDS THREADS
 */
public final class ClassStress {
    public static void main(String[] args) throws Exception {
        long until = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        int threads = Integer.parseInt(args[2]);
        File[] jars = new File(args[0]).listFiles((d, n) -> n.endsWith(".jar"));
        Arrays.sort(jars);
        URL[] urls = new URL[jars.length];
        List<String> names = new ArrayList<>();
        for (int i = 0; i < jars.length; i++) {
            urls[i] = jars[i].toURI().toURL();
            try (ZipFile zip = new ZipFile(jars[i])) {
                for (Enumeration<? extends ZipEntry> e = zip.entries(); e.hasMoreElements(); ) {
                    String n = e.nextElement().getName();
                    if (n.endsWith(".class") && !n.contains("-info") && !n.startsWith("META-INF")) {
                        names.add(n.substring(0, n.length() - 6).replace('/', '.'));
                    }
                }
            }
        }
        AtomicLong loaded = new AtomicLong();
        AtomicLong unlinked = new AtomicLong();
        Random random = new Random(ProcessHandle.current().pid());
        int rounds = 0;
        while (System.nanoTime() < until) {
            Collections.shuffle(names, random);
            ClassLoader parent = ClassLoader.getPlatformClassLoader();
            try (URLClassLoader loader = new URLClassLoader(urls, parent)) {
                Thread[] workers = new Thread[threads];
                for (int t = 0; t < threads; t++) {
                    final int first = t;
                    workers[t] = new Thread(() -> {
                        for (int i = first; i < names.size() && System.nanoTime() < until; i += threads) {
                            try {
                                Class.forName(names.get(i), false, loader);
                                loaded.incrementAndGet();
                            } catch (LinkageError | ClassNotFoundException e) {
                                unlinked.incrementAndGet();
                            }
                        }
                    });
                    workers[t].start();
                }
                for (Thread worker : workers) {
                    worker.join();
                }
            }
            rounds++;
        }
        System.out.println("loaded " + loaded + " classes (" + unlinked + " could not link) in "
                + rounds + " round(s) of " + names.size());
    }
}
