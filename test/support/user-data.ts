// GPU node user data read as its readers read it: a MIME multi-part document (cloud-init,
// nodeadm) through a MIME library, Bottlerocket's settings through a TOML parser.

/** The parts of a MIME multi-part document, each with its content type and body. */
export async function parseMime(text: string): Promise<{ mimeType: string; body: string }[]> {
  const PostalMime = (await import("postal-mime")).default;
  const email = await PostalMime.parse(text);
  return email.attachments.map((a) => ({
    mimeType: a.mimeType,
    body: typeof a.content === "string" ? a.content : Buffer.from(a.content as ArrayBuffer).toString("utf8"),
  }));
}

/** A TOML document (Bottlerocket's settings). */
export async function parseToml(text: string): Promise<any> {
  const { parse } = await import("smol-toml");
  return parse(text);
}
