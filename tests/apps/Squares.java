// A user's Java application, as the tests hand it to numaspark: sums the squares of 0..N-1
// and writes what it was given and what it found as JSON (spark-submit --class Squares
// squares.jar OUT.json N [ANY ARGUMENTS...]). Compiled in the test against pyspark's jars.

import java.io.FileWriter;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

public final class Squares {
  private Squares() {}

  public static void main(String[] args) throws IOException {
    long rows = Long.parseLong(args[1]);
    if (rows < 0) {
      throw new IllegalArgumentException("N must be at least 0, not " + rows);
    }
    SparkSession spark = SparkSession.builder().appName("squares-java").getOrCreate();
    JavaSparkContext context = JavaSparkContext.fromSparkContext(spark.sparkContext());
    long total = spark.range(rows).javaRDD().map(x -> (long) x * (long) x).reduce(Long::sum);
    spark.stop();
    List<String> extra = Arrays.asList(args).subList(2, args.length);
    String quoted = extra.stream().map(Squares::json).collect(Collectors.joining(","));
    try (FileWriter out = new FileWriter(args[0])) {
      out.write("{\"args\": [" + quoted + "], \"sum\": " + total + "}");
    }
  }

  private static String json(String text) {
    StringBuilder found = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') {
        found.append('\\');
      }
      found.append(c);
    }
    return found.append('"').toString();
  }
}
