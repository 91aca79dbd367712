"""Vocabulary for the generated workspace: domain nouns, verbs, adjectives, class suffixes.

Fixed lists (not random strings) so identifiers, docstrings and queries read like a real
business monorepo and split into the same words a search index and a tokenizer see.
"""

from __future__ import annotations


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NOUNS = _words(
    "account address adjustment agent alert allocation amount analytics approval archive asset attachment "
    "audit author balance batch beacon billing blob booking branch broker budget bucket bundle cache "
    "calendar campaign candidate capacity card carrier cart catalog category certificate channel charge "
    "checkout claim client cluster cohort comment commit company compliance config connection consent "
    "contact container content contract coupon credential credit currency customer dashboard dataset "
    "deadline delivery department deployment deposit device digest discount dispatch document domain "
    "draft endpoint engagement entitlement entry environment estimate event exchange experiment export "
    "facility feature feed fee filter fixture forecast fulfillment gateway grant group handler header "
    "health history holding hook identity incident intake index inventory invoice issue item job journal "
    "key label ledger lease license limit lineage listing locale location lock manifest margin market "
    "match member membership merchant message metric migration milestone mirror model module monitor "
    "namespace network node notice notification offer order organization outbox owner package page "
    "partition partner patch payload payment payout permission pipeline plan platform policy pool "
    "portfolio position preference price pricing principal priority product profile project promotion "
    "proposal provider purchase queue quota quote rate receipt recipient record reference refund region "
    "registry release reminder rental replica report request reservation resource response retention "
    "remittance revenue review reward role rollout route rule runner sample schedule schema scope secret "
    "segment sensor session settlement shard shipment signal signature sku slot snapshot source "
    "statement status stock storage store stream subscription supplier survey task tax team template "
    "tenant threshold ticket tier timeline token topic trace tracker transaction transfer trigger "
    "upload usage user variant vendor version visit voucher wallet warehouse webhook widget window "
    "workflow workspace zone"
)

VERBS = _words(
    "add aggregate allocate apply approve archive assign build calculate cancel check clean close collect "
    "compute confirm convert create decode delete deliver dispatch emit encode enqueue ensure estimate "
    "evaluate expire export extract fetch filter find flush format generate get handle ingest index "
    "initialize invalidate list load lookup mark merge migrate normalize notify open parse persist "
    "prepare process publish purge query rebuild reconcile record refresh register reject release "
    "remove render replay reset resolve restore retry revoke rollback route run save schedule "
    "scan send serialize set split start stop submit summarize sync track transform trigger update "
    "upsert validate verify wrap"
)

ADJECTIVES = _words(
    "active archived batched cached canonical cold current default deferred dirty empty expired external "
    "failed regional hot idle incremental internal invalid lazy legacy local missing nested partial "
    "pending primary raw recent remote scheduled shared stale strict temporary unique"
)

CLASS_SUFFIXES = _words(
    "Manager Service Handler Repository Config Client Model Serializer Validator Adapter Builder "
    "Factory Registry Policy Processor Resolver Store Controller Scheduler Provider Worker Mixin "
    "Backend Router Gateway Engine Tracker Cache View Form Schema Event Error"
)

EXCEPTIONS = ("ValueError", "KeyError", "RuntimeError", "TimeoutError", "LookupError", "OSError")

GLUE = _words("the a of for when and to with from is that in on by if not each all every only before after")

TEMPLATE_VERBS = ("Return", "Build", "Compute", "Load", "Check", "Update", "Resolve", "Create", "Handle", "Apply")
