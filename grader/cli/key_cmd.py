"""``grader key``: where this machine's signing key is, and its id (never the key itself).

Two panel members who sign and check each other's bundles and batch folders must hold
the same key: they compare the ids this prints (docs/evidence.md).
"""

from __future__ import annotations

import click

from grader.untrusted import shown


@click.command("key")
def key() -> None:
    """Show where the signing key for bundles and batch stores is, and its id (made on first signing)."""
    from grader.evidence.signing import ENV_VAR, key_path, load_key

    found = load_key(create=False)
    if found is None:
        click.echo(shown(f"no signing key yet at {key_path()}: one is made (mode 0600) the first time a bundle "
                         f"or a batch is signed. To use a key the panel shares, copy it there or set ${ENV_VAR}."))
        return
    click.echo(shown(f"signing key: {found.path}\nkey id: {found.id}"))
