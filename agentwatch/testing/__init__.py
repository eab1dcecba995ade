"""Test support that ships with the package so every test tier can use it.

Nothing in the recorder imports this package at run time. It depends only on
what agentwatch itself depends on (apsw), never on pytest or hypothesis.
"""
