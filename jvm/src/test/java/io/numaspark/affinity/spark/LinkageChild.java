package io.numaspark.affinity.spark;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Run in a child JVM with one Spark line's jars on its class path ({@link SparkLinesTest}):
 * reads the constant pool of every class under the directory it is given (the plugin's
 * classes) and resolves each class, method and field they name of Spark, Scala, Jackson,
 * Dropwizard metrics and SLF4J against that class path, as the JVM will link them. A method
 * whose descriptor differs between Scala 2.12 and 2.13 (a {@code scala.collection.Seq}, say)
 * does not resolve. Prints how many it checked, then each one that does not resolve; exits 1
 * when any does not.
 */
public final class LinkageChild {
  private static final List<String> EXTERNAL = List.of("org/apache/spark/", "scala/",
      "com/fasterxml/jackson/", "com/codahale/metrics/", "org/slf4j/");

  private LinkageChild() {}

  public static void main(String[] args) throws IOException {
    Set<String> refs = new TreeSet<>();
    try (Stream<Path> files = Files.walk(Path.of(args[0]))) {
      for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
        refs.addAll(references(Files.readAllBytes(file)));
      }
    }
    List<String> broken = new ArrayList<>();
    for (String ref : refs) {
      String why = resolve(ref.split(" "));
      if (why != null) {
        broken.add(ref + ": " + why);
      }
    }
    System.out.println("checked " + refs.size());
    broken.forEach(System.out::println);
    System.exit(broken.isEmpty() ? 0 : 1);
  }

  /** {@code C owner}, {@code M owner name descriptor}, {@code F owner name descriptor}. */
  static Set<String> references(byte[] bytes) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    in.skipBytes(8); // magic, minor, major
    int count = in.readUnsignedShort();
    String[] utf = new String[count];
    int[][] links = new int[count][];
    int[] tags = new int[count];
    for (int i = 1; i < count; i++) {
      tags[i] = in.readUnsignedByte();
      switch (tags[i]) {
        case 1 -> utf[i] = in.readUTF();
        case 3, 4 -> in.skipBytes(4);
        case 5, 6 -> {
          in.skipBytes(8);
          i++; // a long or double takes two entries
        }
        case 7, 8, 16, 19, 20 -> links[i] = new int[] {in.readUnsignedShort()};
        case 9, 10, 11, 12, 17, 18 ->
            links[i] = new int[] {in.readUnsignedShort(), in.readUnsignedShort()};
        case 15 -> {
          in.skipBytes(1);
          links[i] = new int[] {in.readUnsignedShort()};
        }
        default -> throw new IOException("constant pool tag " + tags[i] + " at " + i);
      }
    }
    Set<String> refs = new HashSet<>();
    for (int i = 1; i < count; i++) {
      if (tags[i] == 7) {
        String name = utf[links[i][0]].replaceAll("^\\[+L?|;$", "");
        if (external(name)) {
          refs.add("C " + name);
        }
      } else if (tags[i] >= 9 && tags[i] <= 11) {
        String owner = utf[links[links[i][0]][0]].replaceAll("^\\[+L?|;$", "");
        int[] nameAndType = links[links[i][1]];
        if (external(owner)) {
          refs.add((tags[i] == 9 ? "F " : "M ") + owner + " " + utf[nameAndType[0]] + " "
              + utf[nameAndType[1]]);
        }
      }
    }
    return refs;
  }

  private static boolean external(String name) {
    return EXTERNAL.stream().anyMatch(name::startsWith);
  }

  /** Why {@code ref} does not resolve here, or null. */
  static String resolve(String[] ref) {
    Class<?> owner;
    try {
      owner = Class.forName(ref[1].replace('/', '.'), false, LinkageChild.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      return "no class: " + e;
    }
    if (ref[0].equals("C")) {
      return null;
    }
    try {
      for (Class<?> type : hierarchy(owner)) {
        if (ref[0].equals("F") && Arrays.stream(type.getDeclaredFields())
            .anyMatch(f -> f.getName().equals(ref[2])
                && f.getType().descriptorString().equals(ref[3]))) {
          return null;
        }
        List<Executable> candidates = new ArrayList<>(ref[2].equals("<init>")
            ? Arrays.asList(type.getDeclaredConstructors())
            : Arrays.asList(type.getDeclaredMethods()));
        if (ref[0].equals("M") && candidates.stream()
            .anyMatch(m -> name(m).equals(ref[2]) && descriptor(m).equals(ref[3]))) {
          return null;
        }
      }
    } catch (LinkageError e) {
      return "its class cannot be read: " + e;
    }
    return "not in " + owner.getName() + " or its supertypes";
  }

  private static String name(Executable member) {
    return member instanceof Method ? member.getName() : "<init>";
  }

  private static String descriptor(Executable member) {
    String params = Arrays.stream(member.getParameterTypes()).map(Class::descriptorString)
        .collect(Collectors.joining());
    String result = member instanceof Method m ? m.getReturnType().descriptorString() : "V";
    return "(" + params + ")" + result;
  }

  private static List<Class<?>> hierarchy(Class<?> start) {
    List<Class<?>> all = new ArrayList<>();
    Deque<Class<?>> next = new ArrayDeque<>(List.of(start, Object.class));
    while (!next.isEmpty()) {
      Class<?> type = next.poll();
      if (!all.contains(type)) {
        all.add(type);
        if (type.getSuperclass() != null) {
          next.add(type.getSuperclass());
        }
        next.addAll(Arrays.asList(type.getInterfaces()));
      }
    }
    return all;
  }
}
