// Package publish delivers the run-completion CloudEvents waiting in the
// status outbox of Runs and RunConfigurations to the configured HTTP sinks.
//
// Delivery is at least once: an event leaves a sink's list only after the
// sink answered 2xx and the status recording that was written. A crash or a
// write conflict between the two sends the event again, with the same
// CloudEvent id, so a sink drops repeats by id.
//
// A failing sink is retried with exponential backoff per resource and sink,
// without holding back the other sinks. The failure counts live in memory
// only: a restarted operator tries every sink at once.
package publish
