/**
 * Touches MIB mebibytes of heap, holds them SECONDS seconds, exits 0: a JVM whose pages show
 * where its memory policy put them. Usage: java -cp DIR Toucher MIB SECONDS
 */
public final class Toucher {
    public static void main(String[] args) throws InterruptedException {
        int mib = Integer.parseInt(args[0]);
        long holdMs = (long) (Double.parseDouble(args[1]) * 1000);
        byte[][] blocks = new byte[mib * 16][]; // 64 KiB each: small objects for any collector
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = new byte[1 << 16];
            for (int j = 0; j < blocks[i].length; j += 4096) {
                blocks[i][j] = 1;
            }
        }
        System.out.println("touched " + mib + " MiB");
        Thread.sleep(holdMs);
        System.out.println("held " + mib + " MiB for " + args[1] + " s");
    }
}
