package io.numaspark.affinity.spark;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
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
    @JsonProperty("reports") List<Map<String, Object>> reports)
    implements SparkListenerEvent {
  /** The shape written today. */
  public static final int VERSION = 1;
}
