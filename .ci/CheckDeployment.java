import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import javax.lang.model.SourceVersion;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Checks a dry-run deployment (mvn -Prelease deploy -DaltDeploymentRepository=id::file:DIR) against the
 * reactor's poms, so that a module added to the build is checked with no change here:
 *
 * <ul>
 *   <li>every module that deploys (not maven.deploy.skip) is there with its pom; a jar module with its jar,
 *       -sources.jar and -javadoc.jar; a module with src/assembly with its .tar.gz;</li>
 *   <li>each jar's manifest has a valid, unique Automatic-Module-Name under dev.mailbox, the module's version,
 *       and the commit it was built from; a sources jar holds .java files (unless its jar holds no classes), a
 *       Javadoc jar an index.html;</li>
 *   <li>the metadata Maven Central requires: name and description in every module's pom; url, licenses, scm and
 *       developers in the parent (which the modules inherit) and in the BOM (which has no parent); a release
 *       version may not keep the placeholder .example addresses;</li>
 *   <li>the BOM manages exactly the deployed jar modules, at the project's version.</li>
 * </ul>
 *
 * Given a second deployment of the same commit, it also compares every jar and archive of the two byte for byte
 * (reproducible builds). Run with the JDK alone, from the repository root:
 * {@code java .ci/CheckDeployment.java . DEPLOYED [SECOND_DEPLOYED]}.
 */
public class CheckDeployment {

    record Module(Path dir, String groupId, String artifactId, String version, String packaging, boolean deployed,
                  Element pom) {
        boolean isJar() {
            return packaging.equals("jar");
        }
    }

    private final List<String> errors = new ArrayList<>();
    private int files;

    public static void main(String[] args) throws Exception {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: java .ci/CheckDeployment.java ROOT DEPLOYED [SECOND_DEPLOYED]");
            System.exit(2);
        }
        CheckDeployment check = new CheckDeployment();
        Path root = Path.of(args[0]).toAbsolutePath().normalize();
        List<Module> modules = new ArrayList<>();
        check.readReactor(root, modules);
        Path deployed = Path.of(args[1]);
        check.checkDeployment(root, modules, deployed);
        String compared = "";
        if (args.length == 3) {
            compared = ", " + check.compare(deployed, Path.of(args[2])) + " files byte-identical in both builds";
        }
        long published = modules.stream().filter(Module::deployed).count();
        if (!check.errors.isEmpty()) {
            check.errors.forEach(e -> System.out.println("deployment: " + e));
            System.out.println("deployment: FAILED (" + check.errors.size() + " problem(s))");
            System.exit(1);
        }
        System.out.println("deployment: " + published + " modules, " + check.files + " files checked" + compared);
    }

    // ---- the reactor -----------------------------------------------------------------------------------------

    private void readReactor(Path dir, List<Module> out) throws Exception {
        Element pom = parse(dir.resolve("pom.xml")).getDocumentElement();
        String groupId = text(pom, "groupId");
        String version = text(pom, "version");
        Element parentElement = child(pom, "parent");
        if (groupId == null && parentElement != null) {
            groupId = text(parentElement, "groupId");
        }
        if (version == null && parentElement != null) {
            version = text(parentElement, "version");
        }
        String packaging = text(pom, "packaging") == null ? "jar" : text(pom, "packaging");
        boolean skip = "true".equals(property(pom, "maven.deploy.skip"));
        Module m = new Module(dir, groupId, text(pom, "artifactId"), version, packaging, !skip, pom);
        out.add(m);
        Element modules = child(pom, "modules");
        if (modules != null) {
            for (Element e : children(modules, "module")) {
                readReactor(dir.resolve(e.getTextContent().trim()), out);
            }
        }
    }

    // ---- what was deployed -----------------------------------------------------------------------------------

    private void checkDeployment(Path root, List<Module> modules, Path repo) throws Exception {
        Module parent = modules.get(0);
        Map<String, String> moduleNames = new HashMap<>();
        Set<String> jarModules = new TreeSet<>();
        boolean gitTree = Files.exists(root.resolve(".git"));
        for (Module m : modules) {
            String where = m.groupId() + ":" + m.artifactId();
            if (text(m.pom(), "name") == null || text(m.pom(), "description") == null) {
                errors.add(where + ": the pom needs a <name> and a <description> of its own (Maven Central)");
            }
            if (!m.deployed()) {
                continue;
            }
            Map<String, Path> got = deployedFiles(repo, m);
            files += got.size();
            List<String> expected = new ArrayList<>(List.of(".pom"));
            if (m.isJar()) {
                expected.addAll(List.of(".jar", "-sources.jar", "-javadoc.jar"));
                jarModules.add(m.artifactId());
            }
            for (String suffix : expected) {
                if (!got.containsKey(suffix)) {
                    errors.add(where + ": no " + m.artifactId() + "-" + m.version() + suffix + " in " + repo
                            + (suffix.endsWith("sources.jar") || suffix.endsWith("javadoc.jar") ? " (built with -Prelease?)" : ""));
                }
            }
            if (Files.isDirectory(m.dir().resolve("src/assembly"))
                    && got.keySet().stream().noneMatch(s -> s.endsWith(".tar.gz"))) {
                errors.add(where + ": has src/assembly but deployed no .tar.gz");
            }
            if (got.containsKey(".jar")) {
                checkJar(where, m, got.get(".jar"), moduleNames, gitTree);
            }
            // a jar with no classes (a starter that only brings in its dependencies) has no sources to hold
            if (got.containsKey("-sources.jar") && !holds(got.get("-sources.jar"), ".java")
                    && !(got.containsKey(".jar") && !holds(got.get(".jar"), ".class"))) {
                errors.add(where + ": the sources jar holds no .java file");
            }
            if (got.containsKey("-javadoc.jar") && !holds(got.get("-javadoc.jar"), "index.html")) {
                errors.add(where + ": the Javadoc jar has no index.html");
            }
            if (m == parent && got.containsKey(".pom")) {
                checkCentralMetadata(where, parse(got.get(".pom")).getDocumentElement(), m.version());
            }
        }
        for (Module m : modules) {
            if (m.deployed() && m.artifactId().endsWith("-bom")) {
                Map<String, Path> got = deployedFiles(repo, m);
                if (got.containsKey(".pom")) {
                    checkBom(m, parse(got.get(".pom")).getDocumentElement(), jarModules);
                }
            }
        }
        if (modules.stream().noneMatch(m -> m.deployed() && m.artifactId().endsWith("-bom"))) {
            errors.add("no BOM module (an artifactId ending in -bom) is deployed");
        }
    }

    /** @return the module's deployed files by what follows the version in their names (".jar", "-sources.jar") */
    private Map<String, Path> deployedFiles(Path repo, Module m) throws IOException {
        Path dir = repo.resolve(m.groupId().replace('.', '/')).resolve(m.artifactId()).resolve(m.version());
        Map<String, Path> out = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            errors.add(m.groupId() + ":" + m.artifactId() + ": nothing deployed (no " + dir + ")");
            return out;
        }
        String prefix = m.artifactId() + "-";
        try (Stream<Path> list = Files.list(dir)) {
            for (Path f : (Iterable<Path>) list::iterator) {
                String name = normalized(f.getFileName().toString());
                if (name.startsWith(prefix + m.version()) && !name.endsWith(".md5") && !name.endsWith(".sha1")
                        && !name.endsWith(".sha256") && !name.endsWith(".sha512") && !name.endsWith(".asc")) {
                    out.put(name.substring((prefix + m.version()).length()), f);
                }
            }
        }
        return out;
    }

    /** A snapshot's deployed name, artifact-1.0-20261128.101500-3.jar, as artifact-1.0-SNAPSHOT.jar. */
    static String normalized(String fileName) {
        return fileName.replaceFirst("-\\d{8}\\.\\d{6}-\\d+", "-SNAPSHOT");
    }

    private void checkJar(String where, Module m, Path jar, Map<String, String> names, boolean gitTree)
            throws IOException {
        try (JarFile j = new JarFile(jar.toFile())) {
            Attributes a = j.getManifest() == null ? new Attributes() : j.getManifest().getMainAttributes();
            String name = a.getValue("Automatic-Module-Name");
            if (name == null) {
                errors.add(where + ": no Automatic-Module-Name in the jar's manifest");
            } else {
                if (!SourceVersion.isName(name) || !name.startsWith("dev.mailbox.")) {
                    errors.add(where + ": Automatic-Module-Name '" + name + "' is not a module name under dev.mailbox");
                }
                String other = names.put(name, m.artifactId());
                if (other != null) {
                    errors.add(where + ": Automatic-Module-Name '" + name + "' is also " + other + "'s");
                }
            }
            if (!m.version().equals(a.getValue("Implementation-Version"))) {
                errors.add(where + ": Implementation-Version is '" + a.getValue("Implementation-Version") + "', not "
                        + m.version());
            }
            String commit = a.getValue("SCM-Revision");
            if (gitTree && (commit == null || !commit.matches("[0-9a-f]{40}"))) {
                errors.add(where + ": SCM-Revision is '" + commit + "', not the commit the jar was built from");
            }
        }
    }

    private static boolean holds(Path jar, String suffix) throws IOException {
        try (JarFile j = new JarFile(jar.toFile())) {
            return j.stream().anyMatch(e -> e.getName().endsWith(suffix));
        }
    }

    /** url, licenses, scm and developers: what Central requires beyond name and description. */
    private void checkCentralMetadata(String where, Element pom, String version) {
        String url = text(pom, "url");
        Element licenses = child(pom, "licenses");
        Element scm = child(pom, "scm");
        Element developers = child(pom, "developers");
        if (url == null) {
            errors.add(where + ": no <url>");
        }
        if (licenses == null || children(licenses, "license").isEmpty()
                || children(licenses, "license").stream().anyMatch(l -> text(l, "name") == null || text(l, "url") == null)) {
            errors.add(where + ": <licenses> needs a <license> with a <name> and a <url>");
        }
        if (scm == null || text(scm, "url") == null || text(scm, "connection") == null) {
            errors.add(where + ": <scm> needs a <url> and a <connection>");
        }
        if (developers == null || children(developers, "developer").isEmpty()) {
            errors.add(where + ": <developers> needs a <developer>");
        }
        if (!version.endsWith("-SNAPSHOT")) {
            String addresses = url + " " + (scm == null ? "" : scm.getTextContent());
            if (addresses.contains(".example")) {
                errors.add(where + ": release " + version + " still has the placeholder .example addresses (url, scm):"
                        + " set the project's real home first (docs/releasing.md)");
            }
        }
    }

    private void checkBom(Module bom, Element pom, Set<String> jarModules) {
        String where = bom.groupId() + ":" + bom.artifactId();
        if (child(pom, "parent") != null) {
            errors.add(where + ": the deployed BOM has a <parent>: importing it would also import the parent's"
                    + " third-party versions (is the flatten plugin configured?)");
        }
        checkCentralMetadata(where, pom, bom.version());
        if (text(pom, "name") == null || text(pom, "description") == null) {
            errors.add(where + ": the deployed BOM needs a <name> and a <description>");
        }
        Element dm = child(pom, "dependencyManagement");
        Element deps = dm == null ? null : child(dm, "dependencies");
        Map<String, String> managed = new LinkedHashMap<>();
        if (deps != null) {
            for (Element d : children(deps, "dependency")) {
                if (!bom.groupId().equals(text(d, "groupId"))) {
                    errors.add(where + ": manages " + text(d, "groupId") + ":" + text(d, "artifactId")
                            + ", which is not ours (a BOM of ours must not pin third-party versions)");
                    continue;
                }
                managed.put(text(d, "artifactId"), text(d, "version"));
            }
        }
        for (String a : jarModules) {
            if (!managed.containsKey(a)) {
                errors.add(where + ": does not manage " + a + ", which is published: add it to "
                        + bom.dir().getFileName() + "/pom.xml");
            }
        }
        managed.forEach((a, v) -> {
            if (!jarModules.contains(a)) {
                errors.add(where + ": manages " + a + ", which the build does not publish as a jar");
            } else if (v == null || !(v.equals(bom.version()) || v.equals("${project.version}"))) {
                errors.add(where + ": manages " + a + " at '" + v + "', not at the project's version " + bom.version());
            }
        });
    }

    // ---- two builds, byte for byte ---------------------------------------------------------------------------

    private int compare(Path first, Path second) throws IOException {
        Map<String, Path> a = artifacts(first);
        Map<String, Path> b = artifacts(second);
        if (!a.keySet().equals(b.keySet())) {
            Set<String> onlyA = new TreeSet<>(a.keySet());
            onlyA.removeAll(b.keySet());
            Set<String> onlyB = new TreeSet<>(b.keySet());
            onlyB.removeAll(a.keySet());
            errors.add("the two builds deployed different files: only in the first " + onlyA + ", only in the second "
                    + onlyB);
        }
        int same = 0;
        for (Map.Entry<String, Path> e : a.entrySet()) {
            Path other = b.get(e.getKey());
            if (other == null) {
                continue;
            }
            if (Files.mismatch(e.getValue(), other) != -1) {
                errors.add("not reproducible: " + e.getKey() + " differs between the two builds ("
                        + firstDifferentEntry(e.getValue(), other) + ")");
            } else {
                same++;
            }
        }
        return same;
    }

    private static Map<String, Path> artifacts(Path repo) throws IOException {
        Map<String, Path> out = new TreeMap<>();
        try (Stream<Path> all = Files.walk(repo)) {
            for (Path f : (Iterable<Path>) all::iterator) {
                String n = f.getFileName().toString();
                if (Files.isRegularFile(f) && (n.endsWith(".jar") || n.endsWith(".tar.gz"))) {
                    out.put(normalized(repo.relativize(f).getParent().resolve(n).toString()), f);
                }
            }
        }
        return out;
    }

    /** For a jar that differs: the first entry whose bytes or time differ, to say what is not reproducible. */
    private static String firstDifferentEntry(Path a, Path b) {
        if (!a.toString().endsWith(".jar")) {
            return "an archive";
        }
        try (JarFile x = new JarFile(a.toFile()); JarFile y = new JarFile(b.toFile())) {
            for (var e : (Iterable<java.util.jar.JarEntry>) x.stream()::iterator) {
                var f = y.getJarEntry(e.getName());
                if (f == null) {
                    return e.getName() + " only in the first";
                }
                if (e.getTime() != f.getTime()) {
                    return e.getName() + ": times " + e.getTime() + " and " + f.getTime();
                }
                try (InputStream i = x.getInputStream(e); InputStream j = y.getInputStream(f)) {
                    if (!Arrays.equals(i.readAllBytes(), j.readAllBytes())) {
                        return e.getName() + ": contents";
                    }
                }
            }
            return "entry order or metadata";
        } catch (IOException e) {
            return e.toString();
        }
    }

    // ---- XML -------------------------------------------------------------------------------------------------

    private static Document parse(Path file) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(false);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        return f.newDocumentBuilder().parse(file.toFile());
    }

    private static Element child(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e;
            }
        }
        return null;
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> out = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                out.add(e);
            }
        }
        return out;
    }

    private static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null || e.getTextContent().isBlank() ? null : e.getTextContent().trim();
    }

    private static String property(Element pom, String name) {
        Element props = child(pom, "properties");
        return props == null ? null : text(props, name);
    }
}
