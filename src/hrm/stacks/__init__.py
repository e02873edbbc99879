"""Cognitive stacks (004): one isolated HO2 + HO1 stack per agent class over shared code.

`create_stack` builds a stack; `hrm.stacks.visibility` keeps stacks out of each other's
partitions; `hrm.stacks.lifecycle` records recovery and degradation; `hrm.stacks.meta` is the
cross-stack meta agent; `hrm.stacks.flows` holds the two flows of 004 §9.

Names are imported lazily, so importing one submodule (a hook reading anchors, say) does not
load the whole turn machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm._lazy import lazy_exports

if TYPE_CHECKING:
    from hrm.stacks.anchors import add_anchor, read_anchors, retire_anchor
    from hrm.stacks.attention import AttentionPipeline, AttentionTemplate, load_templates
    from hrm.stacks.factory import CognitiveStack, create_stack
    from hrm.stacks.flows import classify_speech_act, flow_for
    from hrm.stacks.lifecycle import RecoveryReport, degrade, provision, record_teardown, recover
    from hrm.stacks.meta import MetaAgent, MetaPattern, MetaReport, meta_patterns_for
    from hrm.stacks.visibility import (
        CrossStackReader,
        StackScope,
        guard_partitions,
        visibility_decision,
    )

__all__ = [
    "AttentionPipeline",
    "AttentionTemplate",
    "CognitiveStack",
    "CrossStackReader",
    "MetaAgent",
    "MetaPattern",
    "MetaReport",
    "RecoveryReport",
    "StackScope",
    "add_anchor",
    "classify_speech_act",
    "create_stack",
    "degrade",
    "flow_for",
    "guard_partitions",
    "load_templates",
    "meta_patterns_for",
    "provision",
    "read_anchors",
    "record_teardown",
    "recover",
    "retire_anchor",
    "visibility_decision",
]

_HOME = {
    "AttentionPipeline": "attention",
    "AttentionTemplate": "attention",
    "CognitiveStack": "factory",
    "CrossStackReader": "visibility",
    "MetaAgent": "meta",
    "MetaPattern": "meta",
    "MetaReport": "meta",
    "RecoveryReport": "lifecycle",
    "StackScope": "visibility",
    "add_anchor": "anchors",
    "classify_speech_act": "flows",
    "create_stack": "factory",
    "degrade": "lifecycle",
    "flow_for": "flows",
    "guard_partitions": "visibility",
    "load_templates": "attention",
    "meta_patterns_for": "meta",
    "provision": "lifecycle",
    "read_anchors": "anchors",
    "record_teardown": "lifecycle",
    "recover": "lifecycle",
    "retire_anchor": "anchors",
    "visibility_decision": "visibility",
}

__getattr__, __dir__ = lazy_exports(globals(), _HOME)
