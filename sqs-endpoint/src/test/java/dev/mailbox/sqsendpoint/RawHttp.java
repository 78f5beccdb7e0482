package dev.mailbox.sqsendpoint;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** Plain HTTP to an endpoint, for the wire formats themselves: forms in, XML or JSON out. */
final class RawHttp {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    record Reply(int status, String body, HttpResponse<String> response) {
        String header(String name) {
            return response.headers().firstValue(name).orElse(null);
        }

        Document xml() {
            try {
                DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
                f.setNamespaceAware(true);
                return f.newDocumentBuilder().parse(new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)));
            } catch (Exception e) {
                throw new AssertionError("not XML: " + body, e);
            }
        }

        /** @return the text of every element of that local name, in document order */
        List<String> all(String element) {
            NodeList nodes = xml().getElementsByTagNameNS("*", element);
            List<String> out = new ArrayList<>();
            for (int i = 0; i < nodes.getLength(); i++) {
                out.add(nodes.item(i).getTextContent());
            }
            return out;
        }

        String one(String element) {
            List<String> all = all(element);
            if (all.size() != 1) {
                throw new AssertionError("expected one <" + element + "> in " + body);
            }
            return all.get(0);
        }

        /** @return the Name/Value pairs of every element {@code entry} (Attribute, MessageAttribute) */
        Map<String, Element> pairs(String entry) {
            NodeList nodes = xml().getElementsByTagNameNS("*", entry);
            Map<String, Element> out = new LinkedHashMap<>();
            for (int i = 0; i < nodes.getLength(); i++) {
                Element e = (Element) nodes.item(i);
                out.put(e.getElementsByTagNameNS("*", "Name").item(0).getTextContent(),
                        (Element) e.getElementsByTagNameNS("*", "Value").item(0));
            }
            return out;
        }
    }

    private RawHttp() {
    }

    static String form(Map<String, String> params) {
        return params.entrySet().stream().map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "="
                + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8)).collect(Collectors.joining("&"));
    }

    static Reply query(URI endpoint, Map<String, String> params) {
        return post(endpoint, form(params), Map.of("Content-Type", "application/x-www-form-urlencoded"));
    }

    static Reply json(URI endpoint, String action, String body) {
        return post(endpoint, body, Map.of("Content-Type", "application/x-amz-json-1.0",
                "X-Amz-Target", "AmazonSQS." + action));
    }

    static Reply post(URI endpoint, String body, Map<String, String> headers) {
        return post(endpoint, body.getBytes(StandardCharsets.UTF_8), headers);
    }

    static Reply post(URI endpoint, byte[] body, Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(endpoint).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        try {
            HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body(), r);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
