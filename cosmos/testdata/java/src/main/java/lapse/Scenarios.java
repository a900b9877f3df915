package lapse;

import com.azure.cosmos.ConsistencyLevel;
import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosDatabase;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosChangeFeedRequestOptions;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedRange;
import com.azure.cosmos.models.FeedResponse;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.SqlParameter;
import com.azure.cosmos.models.SqlQuerySpec;
import com.azure.cosmos.models.ThroughputProperties;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Scenarios that drive lapse's Cosmos DB front-end with the Java SDK
 * (azure-cosmos 4.x) in gateway mode, unmodified but for the endpoint and
 * key. cosmos/java_test.go runs one scenario per run against a fresh server
 * and checks the one JSON line it prints, {"scenario": NAME, ...what it
 * saw}; a failure ends the run with its stack trace on stderr and a non-zero
 * exit status.
 *
 * <pre>java -cp ... lapse.Scenarios SCENARIO</pre>
 *
 * The endpoint comes from COSMOS_ENDPOINT, the key from COSMOS_KEY.
 */
public final class Scenarios {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Scenarios() {}

    public static void main(String[] args) throws Exception {
        String name = args[0];
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("scenario", name);
        try (CosmosClient client = new CosmosClientBuilder()
                .endpoint(System.getenv("COSMOS_ENDPOINT"))
                .key(System.getenv("COSMOS_KEY"))
                .gatewayMode()
                .consistencyLevel(ConsistencyLevel.SESSION)
                .buildClient()) {
            switch (name) {
                case "crud" -> crud(client, out);
                case "queries" -> queries(client, out);
                case "ranges" -> ranges(client, out);
                case "allVersions" -> allVersions(client, out);
                case "scripts" -> scripts(client, out);
                case "tokens" -> tokens(client, out);
                case "uniqueKeys" -> uniqueKeys(client, out);
                default -> throw new IllegalArgumentException("no scenario " + name);
            }
        }
        System.out.println(JSON.writeValueAsString(out));
        System.exit(0);
    }

    /** The HTTP status of the error f raises, 0 when it raises none. */
    private static int status(Runnable f) {
        try {
            f.run();
        } catch (CosmosException e) {
            return e.getStatusCode();
        }
        return 0;
    }

    /**
     * Moves lapse's clock on by d (a Go duration, "90s") through the test's
     * control endpoint, LAPSE_CONTROL_URL.
     */
    private static void advance(String d) {
        try {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create(System.getenv("LAPSE_CONTROL_URL") + "/advance?by=" + d))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("advance " + d + ": " + r.statusCode() + " " + r.body());
            }
        } catch (java.io.IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode item(String id, String pk, int i) {
        ObjectNode o = JSON.createObjectNode();
        o.put("id", id);
        o.put("pk", pk);
        o.put("i", i);
        o.put("parity", i % 2 == 1 ? "odd" : "even");
        return o;
    }

    /** A container of items i00..i11: i 0..11, pk p0..p2 (i mod 3), parity. */
    private static CosmosContainer seeded(CosmosClient client, ThroughputProperties throughput, int n, int keys) {
        client.createDatabase("db");
        CosmosDatabase db = client.getDatabase("db");
        CosmosContainerProperties props = new CosmosContainerProperties("c", "/pk");
        if (throughput != null) {
            db.createContainer(props, throughput);
        } else {
            db.createContainer(props);
        }
        CosmosContainer c = db.getContainer("c");
        for (int i = 0; i < n; i++) {
            c.createItem(item(String.format("i%02d", i), (keys == 3 ? "p" : "k") + (i % keys), i));
        }
        return c;
    }

    private static List<JsonNode> query(CosmosContainer c, String text) {
        List<JsonNode> out = new ArrayList<>();
        c.queryItems(text, new CosmosQueryRequestOptions(), JsonNode.class).forEach(out::add);
        return out;
    }

    private static List<Object> values(List<JsonNode> rows) {
        List<Object> out = new ArrayList<>();
        for (JsonNode r : rows) {
            out.add(r.isObject() && r.has("id") ? r.get("id").asText() : JSON.convertValue(r, Object.class));
        }
        return out;
    }

    static void crud(CosmosClient client, Map<String, Object> out) {
        CosmosContainer c = seeded(client, null, 12, 3);
        out.put("read", c.readItem("i04", new PartitionKey("p1"), JsonNode.class).getItem().get("i").asInt());
        out.put("readOtherPartition", status(() -> c.readItem("i04", new PartitionKey("p0"), JsonNode.class)));
        out.put("createDuplicate", status(() -> c.createItem(item("i04", "p1", 4))));
        c.replaceItem(item("i04", "p1", 40), "i04", new PartitionKey("p1"), new CosmosItemRequestOptions());
        out.put("replaced", c.readItem("i04", new PartitionKey("p1"), JsonNode.class).getItem().get("i").asInt());
        c.upsertItem(item("new", "p1", 99));
        c.deleteItem("i05", new PartitionKey("p2"), new CosmosItemRequestOptions());
        out.put("readDeleted", status(() -> c.readItem("i05", new PartitionKey("p2"), JsonNode.class)));
        CosmosQueryRequestOptions inP1 = new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey("p1"));
        List<Object> ids = new ArrayList<>();
        c.queryItems("SELECT * FROM c", inP1, JsonNode.class).forEach(r -> ids.add(r.get("id").asText()));
        ids.sort(null);
        out.put("partition", ids);
    }

    static void queries(CosmosClient client, Map<String, Object> out) {
        CosmosContainer c = seeded(client, null, 12, 3);
        Map<String, Supplier<Object>> qs = new LinkedHashMap<>();
        qs.put("orderBy", () -> values(query(c, "SELECT * FROM c ORDER BY c.i DESC")));
        qs.put("count", () -> values(query(c, "SELECT VALUE COUNT(1) FROM c")));
        qs.put("sum", () -> values(query(c, "SELECT VALUE SUM(c.i) FROM c WHERE c.parity = 'odd'")));
        qs.put("avg", () -> values(query(c, "SELECT VALUE AVG(c.i) FROM c")));
        qs.put("min", () -> values(query(c, "SELECT VALUE MIN(c.i) FROM c WHERE c.i > 4")));
        qs.put("max", () -> values(query(c, "SELECT VALUE MAX(c.id) FROM c")));
        qs.put("groupBy", () -> query(c, "SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk").size());
        qs.put("distinct", () -> query(c, "SELECT DISTINCT VALUE c.parity FROM c").size());
        qs.put("offsetLimit", () -> values(query(c, "SELECT * FROM c ORDER BY c.i OFFSET 3 LIMIT 4")));
        qs.put("top", () -> values(query(c, "SELECT TOP 3 * FROM c ORDER BY c.i DESC")));
        for (Map.Entry<String, Supplier<Object>> q : qs.entrySet()) {
            out.put(q.getKey(), q.getValue().get());
        }
        SqlQuerySpec spec = new SqlQuerySpec("SELECT * FROM c WHERE c.i >= @min ORDER BY c.i",
                List.of(new SqlParameter("@min", 10)));
        List<Object> params = new ArrayList<>();
        c.queryItems(spec, new CosmosQueryRequestOptions(), JsonNode.class).forEach(r -> params.add(r.get("id").asText()));
        out.put("params", params);
        List<Integer> pages = new ArrayList<>();
        for (FeedResponse<JsonNode> p : c.queryItems("SELECT * FROM c WHERE c.parity = 'even'",
                new CosmosQueryRequestOptions(), JsonNode.class).iterableByPage(3)) {
            pages.add(p.getResults().size());
        }
        out.put("pages", pages);
    }

    static void ranges(CosmosClient client, Map<String, Object> out) {
        CosmosContainer c = seeded(client, ThroughputProperties.createManualThroughput(25100), 30, 10);
        List<FeedRange> ranges = c.getFeedRanges();
        out.put("feedRanges", ranges.size());
        int total = 0;
        int used = 0;
        for (FeedRange r : ranges) {
            int n = 0;
            for (FeedResponse<JsonNode> p : c.queryChangeFeed(
                    CosmosChangeFeedRequestOptions.createForProcessingFromBeginning(r), JsonNode.class).iterableByPage()) {
                n += p.getResults().size();
            }
            total += n;
            if (n > 0) {
                used++;
            }
        }
        out.put("perRange", total);
        out.put("rangesUsed", used);
        out.put("orderBy", values(query(c, "SELECT VALUE c.i FROM c ORDER BY c.i DESC")).subList(0, 5));
        out.put("count", values(query(c, "SELECT VALUE COUNT(1) FROM c")));
        out.put("top", values(query(c, "SELECT TOP 3 VALUE c.i FROM c ORDER BY c.i")));
        out.put("offsetLimit", values(query(c, "SELECT VALUE c.i FROM c ORDER BY c.i OFFSET 28 LIMIT 5")));
        out.put("groups", query(c, "SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk").size());
        out.put("all", query(c, "SELECT * FROM c").size());
    }

    /**
     * The change feed in all-versions-and-deletes mode from now on
     * (createForProcessingFromNow(...).allVersionsAndDeletes()), read again
     * from its continuation: a create, a replace, a client's delete and an
     * expiry, in order, for the whole container and for one partition key.
     */
    static void allVersions(CosmosClient client, Map<String, Object> out) {
        client.createDatabase("db");
        CosmosDatabase db = client.getDatabase("db");
        CosmosContainerProperties props = new CosmosContainerProperties("c", "/pk");
        props.setDefaultTimeToLiveInSeconds(-1);
        db.createContainer(props);
        CosmosContainer c = db.getContainer("c");
        String whole = changes(c, CosmosChangeFeedRequestOptions
                .createForProcessingFromNow(FeedRange.forFullRange()).allVersionsAndDeletes(), null);
        String part = changes(c, CosmosChangeFeedRequestOptions
                .createForProcessingFromNow(FeedRange.forLogicalPartition(new PartitionKey("p"))).allVersionsAndDeletes(), null);
        ObjectNode a = item("a", "p", 1);
        c.createItem(a);
        ObjectNode b = item("b", "q", 1);
        b.put("ttl", 60);
        long bTs = c.createItem(b, new CosmosItemRequestOptions().setContentResponseOnWriteEnabled(true)).getItem().get("_ts").asLong();
        a.put("i", 2);
        c.replaceItem(a, "a", new PartitionKey("p"), new CosmosItemRequestOptions());
        c.deleteItem("a", new PartitionKey("p"), new CosmosItemRequestOptions());
        advance("90s"); // past b's expiry: the feed lists it at its own instant (CO-9)
        List<Map<String, Object>> rows = new ArrayList<>();
        String next = changes(c, CosmosChangeFeedRequestOptions.createForProcessingFromContinuation(whole).allVersionsAndDeletes(), rows);
        List<Object> expiredAfter = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            if (Boolean.TRUE.equals(r.get("ttlExpired"))) {
                expiredAfter.add(((Number) r.get("crts")).longValue() - bTs);
            }
            r.remove("crts");
        }
        out.put("whole", rows);
        out.put("expiredAfter", expiredAfter);
        List<Map<String, Object>> prow = new ArrayList<>();
        changes(c, CosmosChangeFeedRequestOptions.createForProcessingFromContinuation(part).allVersionsAndDeletes(), prow);
        prow.forEach(r -> r.remove("crts"));
        out.put("partition", prow);
        List<Map<String, Object>> again = new ArrayList<>();
        changes(c, CosmosChangeFeedRequestOptions.createForProcessingFromContinuation(next).allVersionsAndDeletes(), again);
        out.put("again", again.size());
    }

    /**
     * Reads the change feed of options to its end as ChangeFeedProcessorItems,
     * adding each change in short to rows (when not null), and returns the
     * continuation of the last page.
     */
    private static String changes(CosmosContainer c, CosmosChangeFeedRequestOptions options, List<Map<String, Object>> rows) {
        String continuation = null;
        for (FeedResponse<com.azure.cosmos.models.ChangeFeedProcessorItem> p : c.queryChangeFeed(
                options, com.azure.cosmos.models.ChangeFeedProcessorItem.class).iterableByPage()) {
            continuation = p.getContinuationToken();
            if (rows == null) {
                continue;
            }
            for (com.azure.cosmos.models.ChangeFeedProcessorItem it : p.getResults()) {
                com.azure.cosmos.models.ChangeFeedMetaData m = it.getChangeFeedMetaData();
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("op", m.getOperationType().toString());
                JsonNode cur = it.getCurrent();
                if (cur != null && cur.has("id")) {
                    r.put("id", cur.get("id").asText());
                    r.put("i", cur.get("i").asInt());
                    r.put("lsnIsDocs", cur.has("_lsn") && cur.get("_lsn").asLong() == m.getLogSequenceNumber());
                } else {
                    JsonNode meta = it.toJsonNode().get("metadata");
                    r.put("id", meta.get("id").asText());
                    r.put("ttlExpired", m.isTimeToLiveExpired());
                }
                r.put("lsn", m.getLogSequenceNumber());
                r.put("previousLsn", m.getPreviousLogSequenceNumber());
                r.put("crts", m.getConflictResolutionTimestamp().getEpochSecond());
                rows.add(r);
            }
        }
        return continuation;
    }

    /** The ids of the items of partition key pk in c, sorted. */
    private static List<String> ids(CosmosContainer c, String pk) {
        List<String> ids = new ArrayList<>();
        c.queryItems("SELECT VALUE c.id FROM c", new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey(pk)),
                String.class).forEach(ids::add);
        ids.sort(null);
        return ids;
    }

    /**
     * Stored procedures, triggers and user-defined functions through
     * CosmosScripts: a procedure that creates the items it is given in its
     * partition, one that writes and then throws (its write rolled back),
     * its console output, a pre-trigger that stamps an item, one that throws
     * (the create refused, nothing stored), and a UDF in a query.
     */
    static void scripts(CosmosClient client, Map<String, Object> out) {
        client.createDatabase("db");
        client.getDatabase("db").createContainer(new CosmosContainerProperties("c", "/pk"));
        CosmosContainer c = client.getDatabase("db").getContainer("c");
        com.azure.cosmos.CosmosScripts s = c.getScripts();
        s.createStoredProcedure(new com.azure.cosmos.models.CosmosStoredProcedureProperties("createAll", """
                function createAll(items) {
                    var coll = getContext().getCollection();
                    var n = 0;
                    items.forEach(function (it) {
                        if (!coll.createDocument(coll.getSelfLink(), it, function (err) { if (err) throw err; })) {
                            throw new Error("not accepted");
                        }
                        n++;
                    });
                    console.log("created " + n);
                    getContext().getResponse().setBody({created: n});
                }"""));
        s.createStoredProcedure(new com.azure.cosmos.models.CosmosStoredProcedureProperties("writeThenFail", """
                function writeThenFail(id) {
                    var coll = getContext().getCollection();
                    coll.createDocument(coll.getSelfLink(), {id: id, pk: "p", i: 0}, function (err) {
                        if (err) throw err;
                        throw new Error("boom after " + id);
                    });
                }"""));
        com.azure.cosmos.models.CosmosStoredProcedureRequestOptions inP = new com.azure.cosmos.models.CosmosStoredProcedureRequestOptions()
                .setPartitionKey(new PartitionKey("p")).setScriptLoggingEnabled(true);
        List<Object> items = List.of(item("x1", "p", 1), item("x2", "p", 2), item("x3", "p", 3));
        com.azure.cosmos.models.CosmosStoredProcedureResponse r = s.getStoredProcedure("createAll").execute(List.of(items), inP);
        out.put("executed", JSON.convertValue(readTree(r.getResponseAsString()), Object.class));
        out.put("log", r.getScriptLog());
        out.put("failed", status(() -> s.getStoredProcedure("writeThenFail").execute(List.of("x9"), inP)));
        out.put("afterSprocs", ids(c, "p"));

        s.createTrigger(new com.azure.cosmos.models.CosmosTriggerProperties("stamp", """
                function stamp() {
                    var req = getContext().getRequest();
                    var doc = req.getBody();
                    doc.stamped = true;
                    req.setBody(doc);
                }""").setTriggerType(com.azure.cosmos.models.TriggerType.PRE)
                .setTriggerOperation(com.azure.cosmos.models.TriggerOperation.CREATE));
        s.createTrigger(new com.azure.cosmos.models.CosmosTriggerProperties("refuse", """
                function refuse() {
                    throw new Error("refused by trigger");
                }""").setTriggerType(com.azure.cosmos.models.TriggerType.PRE)
                .setTriggerOperation(com.azure.cosmos.models.TriggerOperation.ALL));
        c.createItem(item("t1", "q", 1), new PartitionKey("q"),
                new CosmosItemRequestOptions().setPreTriggerInclude(List.of("stamp")));
        out.put("stamped", c.readItem("t1", new PartitionKey("q"), JsonNode.class).getItem().path("stamped").asBoolean());
        out.put("refused", status(() -> c.createItem(item("t2", "q", 2), new PartitionKey("q"),
                new CosmosItemRequestOptions().setPreTriggerInclude(List.of("refuse")))));
        out.put("afterTriggers", ids(c, "q"));

        s.createUserDefinedFunction(new com.azure.cosmos.models.CosmosUserDefinedFunctionProperties("twice",
                "function twice(x) { return x * 2; }"));
        out.put("udf", values(query(c, "SELECT VALUE udf.twice(c.i) FROM c WHERE c.pk = 'p' ORDER BY c.i")));
    }

    private static JsonNode readTree(String s) {
        try {
            return JSON.readTree(s);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Users, permissions and the resource tokens they hand out: a client
     * signed with a Read token reads and queries its container, is refused
     * a write there and a read of another container; one with an All token
     * writes; both are refused once lapse's clock has moved past the
     * tokens' lifetime (CO-8).
     */
    static void tokens(CosmosClient client, Map<String, Object> out) {
        client.createDatabase("db");
        CosmosDatabase db = client.getDatabase("db");
        db.createContainer(new CosmosContainerProperties("ro", "/pk"));
        db.createContainer(new CosmosContainerProperties("rw", "/pk"));
        db.getContainer("ro").createItem(item("a", "p", 1));
        db.createUser(new com.azure.cosmos.models.CosmosUserProperties().setId("u"));
        List<com.azure.cosmos.models.CosmosPermissionProperties> perms = new ArrayList<>();
        try (com.azure.cosmos.CosmosAsyncClient async = new CosmosClientBuilder()
                .endpoint(System.getenv("COSMOS_ENDPOINT")).key(System.getenv("COSMOS_KEY"))
                .gatewayMode().buildAsyncClient()) {
            com.azure.cosmos.CosmosAsyncUser u = async.getDatabase("db").getUser("u");
            perms.add(u.createPermission(new com.azure.cosmos.models.CosmosPermissionProperties().setId("read-ro")
                    .setPermissionMode(com.azure.cosmos.models.PermissionMode.READ).setContainerName("ro"), null)
                    .block().getProperties());
            perms.add(u.createPermission(new com.azure.cosmos.models.CosmosPermissionProperties().setId("all-rw")
                    .setPermissionMode(com.azure.cosmos.models.PermissionMode.ALL).setContainerName("rw"), null)
                    .block().getProperties());
        }
        out.put("tokens", perms.stream().filter(p -> p.getToken() != null && !p.getToken().isEmpty()).count());
        // One client per token (resourceToken): the SDK's permission map
        // (CosmosClientBuilder.permissions) finds no token for the
        // partition key ranges it reads by the container's _rid when the
        // permission names the container by its id, as the SDK's own
        // tests note, against the service too.
        try (CosmosClient readOnly = tokenClient(perms.get(0).getToken());
             CosmosClient readWrite = tokenClient(perms.get(1).getToken())) {
            CosmosContainer ro = readOnly.getDatabase("db").getContainer("ro");
            CosmosContainer rw = readWrite.getDatabase("db").getContainer("rw");
            out.put("read", ro.readItem("a", new PartitionKey("p"), JsonNode.class).getItem().get("i").asInt());
            out.put("query", query(ro, "SELECT * FROM c").size());
            out.put("writeReadOnly", status(() -> ro.createItem(item("b", "p", 2))));
            out.put("readOther", status(() -> readOnly.getDatabase("db").getContainer("rw")
                    .readItem("c", new PartitionKey("p"), JsonNode.class)));
            out.put("writeAll", rw.createItem(item("c", "p", 3)).getStatusCode());
            out.put("readAll", rw.readItem("c", new PartitionKey("p"), JsonNode.class).getItem().get("i").asInt());
            advance("3601s"); // past the tokens' lifetime, one hour by default (CO-8)
            out.put("readExpired", status(() -> ro.readItem("a", new PartitionKey("p"), JsonNode.class)));
            out.put("writeExpired", status(() -> rw.createItem(item("d", "p", 4))));
        }
    }

    private static CosmosClient tokenClient(String token) {
        return new CosmosClientBuilder()
                .endpoint(System.getenv("COSMOS_ENDPOINT"))
                .resourceToken(token)
                .gatewayMode()
                .consistencyLevel(ConsistencyLevel.SESSION)
                .buildClient();
    }

    /**
     * A unique key policy: a second item with the same email in the same
     * partition key is refused (409), in another it is taken; a replace
     * frees the old value; an expired item frees its value at once.
     */
    static void uniqueKeys(CosmosClient client, Map<String, Object> out) {
        client.createDatabase("db");
        CosmosContainerProperties props = new CosmosContainerProperties("c", "/pk");
        props.setDefaultTimeToLiveInSeconds(-1);
        props.setUniqueKeyPolicy(new com.azure.cosmos.models.UniqueKeyPolicy()
                .setUniqueKeys(List.of(new com.azure.cosmos.models.UniqueKey(List.of("/email")))));
        client.getDatabase("db").createContainer(props);
        CosmosContainer c = client.getDatabase("db").getContainer("c");
        java.util.function.BiFunction<String, String, ObjectNode> person = (id, email) -> {
            ObjectNode o = JSON.createObjectNode();
            o.put("id", id);
            o.put("pk", "p");
            o.put("email", email);
            return o;
        };
        c.createItem(person.apply("a", "x@example.com"));
        out.put("duplicate", status(() -> c.createItem(person.apply("b", "x@example.com"))));
        ObjectNode other = person.apply("b", "x@example.com");
        other.put("pk", "q");
        out.put("otherPartition", c.createItem(other).getStatusCode());
        out.put("upsertDuplicate", status(() -> c.upsertItem(person.apply("b", "x@example.com"))));
        c.replaceItem(person.apply("a", "y@example.com"), "a", new PartitionKey("p"), new CosmosItemRequestOptions());
        out.put("afterReplace", c.createItem(person.apply("b", "x@example.com")).getStatusCode());
        ObjectNode brief = person.apply("e", "z@example.com");
        brief.put("ttl", 10);
        c.createItem(brief);
        out.put("beforeExpiry", status(() -> c.createItem(person.apply("f", "z@example.com"))));
        advance("11s");
        out.put("afterExpiry", c.createItem(person.apply("f", "z@example.com")).getStatusCode());
        out.put("ids", ids(c, "p"));
    }
}
