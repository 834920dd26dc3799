"""Which certificates an endpoint's TLS connections trust, and which one they show.

The default trust is a run's choice (`Trust`): `certifi`, Mozilla's bundle as
the `certifi` package ships it (what httpx trusts by default), or `system`, the
operating system's own store through `truststore` (what a company's managed
machines are set up with). A policy's `ca_bundle` adds its CAs to that trust
(a private CA of a gateway does not replace the public ones), and its
`client_cert` (with `client_key`) is shown to servers that ask for one.

`SSL_CERT_FILE` and `SSL_CERT_DIR`, where set, take the place of certifi's
bundle, as they do for httpx.
"""

from __future__ import annotations

import functools
import os
import ssl

from providers.spec import Trust

__all__ = ["tls_context"]


@functools.cache
def tls_context(
    trust: Trust = "certifi",
    ca_bundle: str | None = None,
    client_cert: str | None = None,
    client_key: str | None = None,
    client_key_password: str | None = None,
) -> ssl.SSLContext:
    """The certificate-checking context for these settings, made once per process (loading a
    CA bundle costs tens of milliseconds). A file that cannot be read raises ValueError
    naming the setting, the path and the reason. An encrypted key is opened with
    `client_key_password`, and never by asking on the terminal (OpenSSL's own way): without
    one, its ValueError names the file and `client_key_password_env`."""
    context = _default_trust(trust)
    if ca_bundle is not None:
        try:
            context.load_verify_locations(cafile=ca_bundle)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(
                f"ca_bundle = {ca_bundle!r} cannot be read as PEM CA certificates ({_reason(exc)}): "
                "give the path of a PEM file of the CA that signed the server's certificate"
            ) from exc
    if client_cert is not None:
        key_file = client_key or client_cert
        if client_key_password is None and _encrypted(key_file):
            setting = "client_key" if client_key else "client_cert"
            raise ValueError(
                f"{setting} = {key_file!r} is an encrypted private key: name the environment "
                "variable that holds its pass phrase in client_key_password_env, and set it"
            )
        try:
            # a password always: OpenSSL would otherwise ask for one on the terminal
            context.load_cert_chain(client_cert, client_key, password=client_key_password or "")
        except (OSError, ssl.SSLError) as exc:
            if client_key_password is not None and _encrypted(key_file):
                raise ValueError(
                    f"the private key in {key_file!r} cannot be opened with the pass phrase "
                    f"client_key_password_env gives ({_reason(exc)}): check the variable"
                ) from exc
            key = f" with client_key = {client_key!r}" if client_key else ""
            raise ValueError(
                f"client_cert = {client_cert!r}{key} cannot be loaded ({_reason(exc)}): give a PEM "
                "certificate and its PEM private key (in the same file, or in client_key)"
            ) from exc
    return context


def _encrypted(path: str) -> bool:
    """Whether the PEM file at `path` holds an encrypted private key (PKCS#8's ENCRYPTED
    PRIVATE KEY, or an old-style key's `Proc-Type: 4,ENCRYPTED`)."""
    try:
        with open(path, "rb") as file:
            head = file.read(1 << 20)
    except OSError:
        return False  # loading it says what is wrong
    return b"ENCRYPTED PRIVATE KEY" in head or b"Proc-Type: 4,ENCRYPTED" in head


def _default_trust(trust: Trust) -> ssl.SSLContext:
    if trust == "system":
        import truststore  # the trust the run asks for, only

        return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    cafile = os.environ.get("SSL_CERT_FILE")
    capath = os.environ.get("SSL_CERT_DIR")
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile or None, capath=capath or None)
    import certifi  # the trust the run asks for, only

    return ssl.create_default_context(cafile=certifi.where())


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
