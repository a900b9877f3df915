package lapse;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosDatabase;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.SqlParameter;
import com.azure.cosmos.models.SqlQuerySpec;
import java.util.List;

/**
 * lapse's own program of the flow of Microsoft's Java quickstart for Azure
 * Cosmos DB for NoSQL (azure-cosmos 4.x): create the database and the
 * container if they are missing, upsert items as objects, read one by id
 * and partition key, and query a partition with a parameter, a page at a
 * time. The endpoint and key come from COSMOS_ENDPOINT and COSMOS_KEY.
 */
public final class Quickstart {
    /** An item of the container, as the quickstart maps its products. */
    public record Gear(String id, String category, String name, int quantity) {}

    private Quickstart() {}

    public static void main(String[] args) {
        try (CosmosClient client = new CosmosClientBuilder()
                .endpoint(System.getenv("COSMOS_ENDPOINT"))
                .key(System.getenv("COSMOS_KEY"))
                .gatewayMode()
                .buildClient()) {
            client.createDatabaseIfNotExists("outfitter");
            CosmosDatabase database = client.getDatabase("outfitter");
            database.createContainerIfNotExists(new CosmosContainerProperties("gear", "/category"));
            CosmosContainer container = database.getContainer("gear");
            System.out.println("ready: outfitter/gear");

            for (Gear g : List.of(
                    new Gear("g1", "tents", "ridge tent", 4),
                    new Gear("g2", "stoves", "canister stove", 9),
                    new Gear("g3", "stoves", "wood stove", 2))) {
                // Write responses carry no item unless the client asks for
                // it (contentResponseOnWriteEnabled): the upsert throws if
                // it fails.
                container.upsertItem(g);
                System.out.printf("upserted %s (%s)%n", g.id(), g.name());
            }

            Gear one = container.readItem("g1", new PartitionKey("tents"), Gear.class).getItem();
            System.out.printf("read g1: %s, %d left%n", one.name(), one.quantity());

            SqlQuerySpec query = new SqlQuerySpec("SELECT * FROM c WHERE c.category = @category ORDER BY c.name",
                    List.of(new SqlParameter("@category", "stoves")));
            CosmosQueryRequestOptions options = new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey("stoves"));
            int n = 0;
            for (FeedResponse<Gear> page : container.queryItems(query, options, Gear.class).iterableByPage(1)) {
                n++;
                for (Gear g : page.getResults()) {
                    System.out.printf("stoves, page %d: %s %s%n", n, g.id(), g.name());
                }
            }
        }
        System.exit(0);
    }
}
