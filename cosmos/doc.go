// Package cosmos is lapse's Azure Cosmos DB for NoSQL front-end: the REST
// API that the official SDKs (azcosmos, @azure/cosmos) speak, on one port
// that answers TLS and plain HTTP. Databases and containers are core
// entities and items are core items keyed by partition key and id, grouped
// by partition key, so that a container's TTL settings (defaultTtl and item
// ttl, CO-1..CO-7) are core policy and an expired item is gone from every
// read at once. Queries run in cosmos/query.
//
// The server checks the master-key signature of every request, keeps the
// service's resource shapes (_rid, _self, _etag, _ts), ETags, paging with
// continuations, the change feed and transactional batches, and answers
// errors as the service does: {"code": ..., "message": ...} with its status
// and, where it sends one, x-ms-substatus. Before the routes (wire.go,
// rids.go), paths are read as the service's gateway reads them (a doubled
// leading slash as one, _rid links as the ids they stand for), and header
// names go out as the service writes them.
package cosmos
