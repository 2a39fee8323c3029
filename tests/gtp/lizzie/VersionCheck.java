// Runs Lizzie's own start-up check (featurecat.lizzie.analysis.Leelaz.parseLine, from the Lizzie jar on the
// class path) on an engine's answers to Lizzie's first two commands, `name` and `version`.
//
// Usage: java -Djava.awt.headless=true -cp lizzie.jar VersionCheck.java "=1 NAME" "=2 VERSION"
// Prints one line of JSON: {"kataGo": bool, "outcome": "accepted" | "dialog" | "crash", "detail": ...}.
//   accepted: Lizzie went on to Lizzie.initializeAfterVersionCheck (it starts pondering with lz-analyze);
//   dialog:   Lizzie opened its "requires version 0.15" message box inside parseLine, which holds the engine
//             lock: the paint thread then waits on that lock for good (the start-up hang);
//   crash:    parseLine threw anything else (Lizzie's reader thread ends; Lizzie never finishes loading).
// The Leelaz object is made without its constructor (which would start an engine) and given only the fields
// that parseLine reads on this path.
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayDeque;

public class VersionCheck {
  static Object allocate(Class<?> cls) throws Exception {
    Field field = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
    field.setAccessible(true);
    Object unsafe = field.get(null);
    Method allocate = unsafe.getClass().getMethod("allocateInstance", Class.class);
    return allocate.invoke(unsafe, cls);
  }

  static void set(Object target, String name, Object value) throws Exception {
    Field field = target.getClass().getDeclaredField(name);
    field.setAccessible(true);
    field.set(target, value);
  }

  static String quote(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
  }

  public static void main(String[] args) throws Exception {
    Class<?> leelazClass = Class.forName("featurecat.lizzie.analysis.Leelaz");
    Object leelaz = allocate(leelazClass);
    set(leelaz, "cmdQueue", new ArrayDeque<String>());
    set(leelaz, "isLoaded", true);
    set(leelaz, "isCheckingName", true);
    set(leelaz, "isCheckingVersion", true);
    Method parseLine = leelazClass.getDeclaredMethod("parseLine", String.class);
    parseLine.setAccessible(true);
    String outcome = "accepted";
    String detail = "";
    try {
      for (String line : args) {
        parseLine.invoke(leelaz, line);
      }
    } catch (InvocationTargetException wrapped) {
      Throwable cause = wrapped.getCause();
      detail = cause.toString();
      outcome = "crash";
      for (StackTraceElement frame : cause.getStackTrace()) {
        String where = frame.getClassName() + "." + frame.getMethodName();
        if (where.equals("javax.swing.JOptionPane.showMessageDialog")) {
          outcome = "dialog";
          break;
        }
        if (where.equals("featurecat.lizzie.Lizzie.initializeAfterVersionCheck")) {
          outcome = "accepted"; // past the check; the rest of Lizzie (config, GUI) is not set up here
          break;
        }
      }
    }
    Field kata = leelazClass.getDeclaredField("isKataGo");
    kata.setAccessible(true);
    System.out.println("{\"kataGo\": " + kata.getBoolean(leelaz) + ", \"outcome\": " + quote(outcome)
        + ", \"detail\": " + quote(detail) + "}");
  }
}
