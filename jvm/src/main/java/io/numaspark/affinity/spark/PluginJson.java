package io.numaspark.affinity.spark;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.Map;

/**
 * How the plugin's records become JSON (Jackson: on every Spark JVM's classpath): a record's
 * components by their names in snake_case ({@code cpuStart} is {@code cpu_start}), sorted,
 * absent (null) ones left out. The names are {@code jvm/contract.json}'s, checked by a test.
 */
final class PluginJson {
  static final ObjectMapper MAPPER = JsonMapper.builder()
      .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
      .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
      .serializationInclusion(JsonInclude.Include.NON_NULL)
      .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .build();

  private PluginJson() {}

  /** One record as one line of JSON. */
  static String line(Object record) {
    try {
      return MAPPER.writeValueAsString(record);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write " + record + " as JSON", e);
    }
  }

  /** A record as a map of its JSON fields (plain JDK values: a message Spark can send). */
  @SuppressWarnings("unchecked")
  static Map<String, Object> toMap(Object record) {
    return MAPPER.convertValue(record, Map.class);
  }

  /** A record back from such a map. */
  static <T> T fromMap(Map<?, ?> fields, Class<T> type) {
    return MAPPER.convertValue(fields, type);
  }
}
