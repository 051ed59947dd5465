package io.lockbridge;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON lockbridge-java needs, without a JSON library on the
 * classpath: reading the script manifest (and the golden vectors in tests),
 * and writing registry entries exactly as Go's encoding/json writes them.
 * Objects read as {@code Map<String,Object>} (insertion order), arrays as
 * {@code List<Object>}, integers as {@code Long}, other numbers as
 * {@code Double}.
 */
final class Json {
    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    /** Parses a JSON document; IllegalArgumentException when it is not one. */
    static Object parse(String text) {
        Json parser = new Json(text);
        parser.ws();
        Object value = parser.value();
        parser.ws();
        if (parser.pos != text.length()) {
            throw parser.bad("trailing data");
        }
        return value;
    }

    private IllegalArgumentException bad(String why) {
        return new IllegalArgumentException("json: " + why + " at offset " + pos);
    }

    private void ws() {
        while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
    }

    private Object value() {
        if (pos >= text.length()) {
            throw bad("unexpected end");
        }
        char next = text.charAt(pos);
        switch (next) {
            case '{' -> {
                pos++;
                Map<String, Object> object = new LinkedHashMap<>();
                ws();
                if (peek('}')) {
                    return object;
                }
                do {
                    ws();
                    if (pos >= text.length() || text.charAt(pos) != '"') {
                        throw bad("want a key");
                    }
                    String key = string();
                    ws();
                    expect(':');
                    ws();
                    object.put(key, value());
                    ws();
                } while (peek(','));
                expect('}');
                return object;
            }
            case '[' -> {
                pos++;
                List<Object> array = new ArrayList<>();
                ws();
                if (peek(']')) {
                    return array;
                }
                do {
                    ws();
                    array.add(value());
                    ws();
                } while (peek(','));
                expect(']');
                return array;
            }
            case '"' -> {
                return string();
            }
            default -> {
                if (text.startsWith("true", pos)) {
                    pos += 4;
                    return Boolean.TRUE;
                }
                if (text.startsWith("false", pos)) {
                    pos += 5;
                    return Boolean.FALSE;
                }
                if (text.startsWith("null", pos)) {
                    pos += 4;
                    return null;
                }
                return number();
            }
        }
    }

    private boolean peek(char want) {
        if (pos < text.length() && text.charAt(pos) == want) {
            pos++;
            return true;
        }
        return false;
    }

    private void expect(char want) {
        if (!peek(want)) {
            throw bad("want '" + want + "'");
        }
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw bad("unterminated string");
            }
            char next = text.charAt(pos++);
            if (next == '"') {
                return out.toString();
            }
            if (next != '\\') {
                out.append(next);
                continue;
            }
            if (pos >= text.length()) {
                throw bad("unterminated escape");
            }
            char escape = text.charAt(pos++);
            switch (escape) {
                case '"', '\\', '/' -> out.append(escape);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    if (pos + 4 > text.length()) {
                        throw bad("short \\u escape");
                    }
                    out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    pos += 4;
                }
                default -> throw bad("bad escape");
            }
        }
    }

    private Object number() {
        int start = pos;
        while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
        String literal = text.substring(start, pos);
        if (literal.isEmpty()) {
            throw bad("unexpected character");
        }
        if (literal.matches("-?\\d+")) {
            return Long.parseLong(literal);
        }
        return Double.parseDouble(literal);
    }

    /**
     * A JSON string literal for text, escaped as Go's encoding/json escapes it
     * (so an entry Java writes is byte for byte what Go would write): \" \\
     * \n \r \t, other control characters and &lt; &gt; &amp; U+2028 U+2029
     * as \\u00XX.
     */
    static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char character = text.charAt(i);
            switch (character) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (character < 0x20 || character == '<' || character == '>' || character == '&'
                            || character == '\u2028' || character == '\u2029') {
                        out.append(String.format("\\u%04x", (int) character));
                    } else {
                        out.append(character);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
