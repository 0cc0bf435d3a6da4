"""The configuration schema: the field language of configuration tables and the registries of named components.

Kinds declare their keys with it and the application validates files against it; it
imports neither (the layer below both).
"""
