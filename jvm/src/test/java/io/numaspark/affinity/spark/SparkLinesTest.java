package io.numaspark.affinity.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.junit.jupiter.api.Test;

/**
 * The Spark lines and Javas the plugin's one jar serves. It is compiled against Spark 4
 * (Scala 2.13) and must link against Spark 3.5 (Scala 2.12) too: every Spark, Scala, Jackson,
 * metrics and SLF4J member its classes name resolves in each line's jars ({@link
 * LinkageChild}), and Spark 3.5's own JSON mapper writes and reads its event. Spark 3.5's jars
 * are those of {@code bash scripts/spark35.sh} ({@code .venv-spark35}, or {@code
 * -Dspark35.jars=DIR}); without them those tests are skipped. The entry class Spark loads
 * ({@link AffinityPlugin}) is Java 8 bytecode and keeps the plugin off below Java 17.
 */
class SparkLinesTest {
  private static final int JAVA_8 = 52;
  private static final int JAVA_17 = 61;

  private static int classVersion(String name) throws IOException {
    try (InputStream in = AffinityPlugin.class.getResourceAsStream(name + ".class")) {
      DataInputStream data = new DataInputStream(in);
      assertEquals(0xCAFEBABE, data.readInt(), name);
      data.readUnsignedShort(); // minor
      return data.readUnsignedShort();
    }
  }

  @Test
  void theEntryClassIsJava8BytecodeAndTheRestJava17() throws IOException {
    for (String name : List.of("AffinityPlugin", "AffinityPlugin$NoDriver",
        "AffinityPlugin$NoExecutor")) {
      assertEquals(JAVA_8, classVersion(name), name);
    }
    assertEquals(JAVA_17, classVersion("AffinityDriverPlugin"));
  }

  @Test
  void belowJava17ThePluginsDoNothing() {
    for (int java : new int[] {8, 11, 16, 0}) {
      AffinityPlugin plugin = new AffinityPlugin(java);
      assertInstanceOf(AffinityPlugin.NoDriver.class, plugin.driverPlugin(), "Java " + java);
      assertInstanceOf(AffinityPlugin.NoExecutor.class, plugin.executorPlugin(), "Java " + java);
    }
    for (int java : new int[] {17, 21, 25}) {
      AffinityPlugin plugin = new AffinityPlugin(java);
      assertInstanceOf(AffinityDriverPlugin.class, plugin.driverPlugin(), "Java " + java);
      assertInstanceOf(AffinityExecutorPlugin.class, plugin.executorPlugin(), "Java " + java);
    }
    String said = AffinityPlugin.warning(11);
    assertTrue(said.startsWith("numaspark's affinity plugin needs Java 17; this JVM is Java 11 (")
        && said.endsWith("): running without it"), said);
  }

  @Test
  void javaVersionsAreReadAsSparkSeesThem() {
    assertEquals(8, AffinityPlugin.javaFeature("1.8"));
    assertEquals(11, AffinityPlugin.javaFeature("11"));
    assertEquals(17, AffinityPlugin.javaFeature("17"));
    assertEquals(25, AffinityPlugin.javaFeature("25"));
    assertEquals(0, AffinityPlugin.javaFeature(null));
    assertEquals(0, AffinityPlugin.javaFeature(""));
    assertEquals(Runtime.version().feature(),
        AffinityPlugin.javaFeature(System.getProperty("java.specification.version")));
  }

  @Test
  void theReportsSoFarArePostedWhenTheApplicationEnds() {
    // Spark 3.5 stops its listener bus before it shuts the plugins down: a batch posted at
    // close would be dropped there
    List<NumaPlacementEvent> posted = new java.util.ArrayList<>();
    EventLogPoster poster = new EventLogPoster(posted::add);
    poster.add(Map.of("executor", "1", "time_ms", 1L));
    poster.atApplicationEnd().onApplicationEnd(
        new SparkListenerApplicationEnd(2L, scala.Option.empty()));
    assertEquals(1, posted.size());
    assertEquals("1", posted.get(0).reports().get(0).get("executor"));
    poster.close(); // nothing new: no second batch
    assertEquals(1, posted.size());
  }

  @Test
  void everyMemberTheJarNamesLinksAgainstSpark4() throws Exception {
    linksAgainst(sparkJars());
  }

  @Test
  void everyMemberTheJarNamesLinksAgainstSpark35() throws Exception {
    linksAgainst(spark35Jars());
  }

  @Test
  void spark35sJsonMapperWritesTheEventAndReadsItBack() throws Exception {
    List<String> lines = child(spark35Jars(), JsonProtocolChild.class.getName());
    assertEquals(2, lines.size(), String.join("\n", lines));
    assertTrue(lines.get(0).startsWith(
        "{\"Event\":\"io.numaspark.affinity.spark.NumaPlacementEvent\""), lines.get(0));
    assertTrue(lines.get(0).contains("\"time_ms\":1795438078846"), lines.get(0));
    String read = lines.get(1);
    assertTrue(read.startsWith(NumaPlacementEvent.class.getName() + " 1795438078846 ["), read);
    assertTrue(read.contains("executor=driver") && read.contains("bytes_per_node={0=3145728}"),
        read);
  }

  private static void linksAgainst(Path jars) throws Exception {
    List<String> lines = child(jars, LinkageChild.class.getName(), "target/classes");
    assertTrue(lines.get(0).startsWith("checked "), String.join("\n", lines));
    assertTrue(Integer.parseInt(lines.get(0).substring(8)) > 100, lines.get(0));
    assertEquals(1, lines.size(), "not linked against " + jars + ":\n" + String.join("\n",
        lines));
  }

  private static Path sparkJars() {
    String jars = System.getProperty("spark.jars");
    assumeTrue(jars != null && Files.isDirectory(Path.of(jars)), "spark.jars is not set");
    return Path.of(jars);
  }

  /** Spark 3.5's jars: -Dspark35.jars, else those of scripts/spark35.sh's venv. */
  static Path spark35Jars() throws IOException {
    String given = System.getProperty("spark35.jars", "");
    Path jars = given.isEmpty() ? null : Path.of(given);
    Path lib = Path.of("..", ".venv-spark35", "lib");
    if (jars == null && Files.isDirectory(lib)) {
      try (Stream<Path> pythons = Files.list(lib)) {
        jars = pythons.map(p -> p.resolve("site-packages/pyspark/jars"))
            .filter(Files::isDirectory).findFirst().orElse(null);
      }
    }
    assumeTrue(jars != null && Files.isDirectory(jars),
        "no Spark 3.5 here: bash scripts/spark35.sh installs it");
    return jars;
  }

  /** A child JVM (this one's Java) with the plugin's and the tests' classes and {@code jars}. */
  private static List<String> child(Path jars, String main, String... args) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath = String.join(File.pathSeparator, "target/classes", "target/test-classes",
        jars + "/*");
    List<String> argv = new java.util.ArrayList<>(List.of(java, "-cp", classPath, main));
    argv.addAll(List.of(args));
    Process child = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
    List<String> lines = new String(child.getInputStream().readAllBytes(),
        StandardCharsets.UTF_8).lines().toList();
    child.waitFor();
    return lines;
  }
}
