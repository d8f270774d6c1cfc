package io.numaspark.affinity.spark;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.spark.scheduler.SparkListenerEvent;

/**
 * A batch of placement reports in Spark's own event log: the driver plugin posts it to the
 * listener bus ({@link EventLogPoster}), and Spark's event-log writer writes it as one line,
 * {@code {"Event":"io.numaspark.affinity.spark.NumaPlacementEvent","version":1,
 * "time_ms":...,"reports":[...]}}, through its own JSON mapper (Jackson: the {@code Event}
 * field is the class's name, the rest this record's properties).
 *
 * <p>Each report is a {@link PlacementReport} as a map of its JSON fields (snake_case, as in
 * {@code placementFile}), the driver's own among them ({@code executor} {@code driver}). A
 * History Server without this class on its class path skips the line (an event class it
 * cannot load); one with it reads the event back and passes it to its listeners, which ignore
 * it. {@code jvm/contract.json}'s {@code placement_event} lists the fields.
 *
 * @param version the shape of this event: 1
 * @param timeMs when the driver posted it (epoch milliseconds)
 * @param reports the reports received since the previous batch: every executor's first (with
 *     its host's topology) and then its latest in each batch
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record NumaPlacementEvent(
    @JsonProperty("version") int version,
    @JsonProperty("time_ms") long timeMs,
    @JsonProperty("reports") @JsonDeserialize(using = PlainReports.class)
    List<Map<String, Object>> reports)
    implements SparkListenerEvent {
  /** The shape written today. */
  public static final int VERSION = 1;

  /**
   * Reads the reports as plain JDK values. Spark's mapper has Scala's Jackson module, which
   * reads a nested JSON object of an {@code Object} field as a Scala map, which no Java reader
   * of a report (a History Server's listener: {@code PlacementReport.fromMap}) can take.
   */
  static final class PlainReports extends JsonDeserializer<List<Map<String, Object>>> {
    private static final ObjectMapper PLAIN = new ObjectMapper();
    private static final TypeReference<List<Map<String, Object>>> REPORTS =
        new TypeReference<>() {};

    @Override
    public List<Map<String, Object>> deserialize(JsonParser parser, DeserializationContext ctx)
        throws IOException {
      return PLAIN.convertValue(parser.readValueAsTree(), REPORTS);
    }
  }
}
