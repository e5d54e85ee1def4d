//! TextEncoder's UTF-8 and TextDecoder's decoding on `encoding_rs` (the WHATWG Encoding
//! standard's own implementation), with the labels Node accepts.
//!
//! A decode that flushes uses a fresh decoder and keeps nothing. A streaming decoder keeps its
//! state here between calls, in a slot tied to its TextDecoder's private state object by a weak
//! handle: the slot is released when the stream flushes or fails, and slots whose object the
//! garbage collector took are swept as new ones open, so abandoned streams cannot pile up
//! outside the heap.

use encoding_rs::{CoderResult, Decoder, DecoderResult, Encoding, ISO_8859_16, REPLACEMENT, X_USER_DEFINED};
use encoding_rs::{
    BIG5, EUC_JP, EUC_KR, GB18030, GBK, IBM866, ISO_2022_JP, ISO_8859_10, ISO_8859_13, ISO_8859_14, ISO_8859_15,
    ISO_8859_2, ISO_8859_3, ISO_8859_4, ISO_8859_5, ISO_8859_6, ISO_8859_7, ISO_8859_8, ISO_8859_8_I, KOI8_R, KOI8_U,
    MACINTOSH, SHIFT_JIS, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1250, WINDOWS_1251, WINDOWS_1252, WINDOWS_1253,
    WINDOWS_1254, WINDOWS_1255, WINDOWS_1256, WINDOWS_1257, WINDOWS_1258, WINDOWS_874, X_MAC_CYRILLIC,
};

use super::{source_bytes, string_arg, view_bytes};
use crate::isolate::render::copy_text;
use crate::ledger::text::Text;

/// The Node major the run's host runs (its decoder labels differ by major).
pub struct NodeMajor(pub u32);

/// What a label names, as Node resolves it: WHATWG labels (ASCII whitespace trimmed, ASCII case
/// ignored). Node refuses the replacement encoding, and `iso-8859-16` and `x-user-defined`
/// before Node 24, naming the encoding the label resolved to.
enum Resolved {
    Supported(&'static Encoding),
    Refused(&'static Encoding),
    Unknown,
}

/// Every encoding a label can name (the standard's 40). A TextDecoder names its encoding to the
/// natives by its index here, resolved once at construction rather than at each decode.
static ENCODINGS: [&Encoding; 40] = [
    UTF_8,
    IBM866,
    ISO_8859_2,
    ISO_8859_3,
    ISO_8859_4,
    ISO_8859_5,
    ISO_8859_6,
    ISO_8859_7,
    ISO_8859_8,
    ISO_8859_8_I,
    ISO_8859_10,
    ISO_8859_13,
    ISO_8859_14,
    ISO_8859_15,
    ISO_8859_16,
    KOI8_R,
    KOI8_U,
    MACINTOSH,
    WINDOWS_874,
    WINDOWS_1250,
    WINDOWS_1251,
    WINDOWS_1252,
    WINDOWS_1253,
    WINDOWS_1254,
    WINDOWS_1255,
    WINDOWS_1256,
    WINDOWS_1257,
    WINDOWS_1258,
    X_MAC_CYRILLIC,
    GBK,
    GB18030,
    BIG5,
    EUC_JP,
    ISO_2022_JP,
    SHIFT_JIS,
    EUC_KR,
    REPLACEMENT,
    UTF_16BE,
    UTF_16LE,
    X_USER_DEFINED,
];

fn code_of(encoding: &'static Encoding) -> Option<usize> {
    ENCODINGS.iter().position(|e| *e == encoding)
}

/// The encoding a native's argument names by its index in `ENCODINGS`.
fn encoding_arg(
    scope: &mut v8::PinScope,
    args: &v8::FunctionCallbackArguments,
    index: i32,
) -> Option<&'static Encoding> {
    let code = args.get(index).int32_value(scope)?;
    usize::try_from(code).ok().and_then(|code| ENCODINGS.get(code).copied())
}

fn resolve(label: &str, major: u32) -> Resolved {
    match Encoding::for_label(label.as_bytes()) {
        None => Resolved::Unknown,
        Some(e) if e == REPLACEMENT || (major < 24 && (e == ISO_8859_16 || e == X_USER_DEFINED)) => {
            Resolved::Refused(e)
        }
        Some(e) => Resolved::Supported(e),
    }
}

/// How TextDecoder reports an encoding's name.
fn name(encoding: &'static Encoding) -> String {
    encoding.name().to_ascii_lowercase()
}

fn major(scope: &v8::PinScope) -> u32 {
    scope.get_slot::<NodeMajor>().map_or(24, |m| m.0)
}

/// `encodingFor(label)` → `[name, code]` (the code is what `textDecode` and `streamOpen` take),
/// `[name]` when Node refuses that encoding, or `null` for a label that names none.
pub fn encoding_for<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Some(label) = string_arg(scope, &args, 0) else { return };
    let label = label.to_rust_string_lossy(scope);
    match resolve(&label, major(scope)) {
        Resolved::Supported(encoding) => {
            let (Some(text), Some(code)) = (v8::String::new(scope, &name(encoding)), code_of(encoding)) else { return };
            let code = v8::Integer::new(scope, code as i32);
            rv.set(v8::Array::new_with_elements(scope, &[text.into(), code.into()]).into());
        }
        Resolved::Refused(encoding) => {
            let Some(text) = v8::String::new(scope, &name(encoding)) else { return };
            rv.set(v8::Array::new_with_elements(scope, &[text.into()]).into());
        }
        Resolved::Unknown => rv.set_null(),
    }
}

fn fresh(encoding: &'static Encoding, ignore_bom: bool) -> Decoder {
    if ignore_bom {
        encoding.new_decoder_without_bom_handling()
    } else {
        encoding.new_decoder_with_bom_removal()
    }
}

struct Stream {
    owner: v8::Weak<v8::Object>,
    decoder: Decoder,
}

/// The run's streaming decoders (an isolate slot).
#[derive(Default)]
struct Streams {
    slots: Vec<Option<Stream>>,
    free: Vec<usize>,
    /// Open slots after which dead owners are swept again (twice the live count of the last sweep).
    sweep_at: usize,
}

impl Streams {
    fn open(&mut self, scope: &mut v8::PinScope, owner: v8::Local<v8::Object>, decoder: Decoder) -> usize {
        let open = self.slots.len() - self.free.len();
        if open >= self.sweep_at {
            for (i, slot) in self.slots.iter_mut().enumerate() {
                if slot.as_ref().is_some_and(|s| s.owner.is_empty()) {
                    *slot = None;
                    self.free.push(i);
                }
            }
            self.sweep_at = (2 * (self.slots.len() - self.free.len())).max(64);
        }
        let stream = Some(Stream { owner: v8::Weak::new(scope, owner), decoder });
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = stream;
                i
            }
            None => {
                self.slots.push(stream);
                self.slots.len() - 1
            }
        }
    }

    /// The stream `id` if `owner` opened it.
    fn get(&mut self, scope: &v8::PinScope, id: usize, owner: v8::Local<v8::Object>) -> Option<&mut Stream> {
        let stream = self.slots.get_mut(id)?.as_mut()?;
        let held = stream.owner.to_local(scope)?;
        held.strict_equals(owner.into()).then_some(stream)
    }

    fn close(&mut self, id: usize) {
        if let Some(slot @ Some(_)) = self.slots.get_mut(id) {
            *slot = None;
            self.free.push(id);
        }
    }
}

/// Output units decoded per step; each step's text joins the result as a V8 string, so a large
/// input is held on the heap (under its cap), never in one buffer here.
const STEP_UNITS: usize = 32 * 1024;

enum Decoded<'s> {
    Text(v8::Local<'s, v8::String>),
    Malformed,
    TooLong,
}

fn decode_all<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    decoder: &mut Decoder,
    mut input: &[u8],
    fatal: bool,
    last: bool,
) -> Decoded<'s> {
    let mut text = v8::String::empty(scope);
    // Sized to the input (and what the decoder holds), so a short decode does not zero 64 KiB.
    let units = decoder.max_utf16_buffer_length(input.len()).unwrap_or(STEP_UNITS).clamp(4, STEP_UNITS);
    let mut buffer = vec![0u16; units];
    loop {
        let (full, read, written) = if fatal {
            let (result, read, written) = decoder.decode_to_utf16_without_replacement(input, &mut buffer, last);
            match result {
                DecoderResult::Malformed(..) => return Decoded::Malformed,
                DecoderResult::OutputFull => (true, read, written),
                DecoderResult::InputEmpty => (false, read, written),
            }
        } else {
            let (result, read, written, _) = decoder.decode_to_utf16(input, &mut buffer, last);
            (result == CoderResult::OutputFull, read, written)
        };
        input = &input[read..];
        if written > 0 {
            let Some(step) = v8::String::new_from_two_byte(scope, &buffer[..written], v8::NewStringType::Normal) else {
                return Decoded::TooLong;
            };
            match v8::String::concat(scope, text, step) {
                Some(joined) => text = joined,
                None => return Decoded::TooLong,
            }
        }
        if !full {
            return Decoded::Text(text);
        }
    }
}

/// `textDecode(owner, id, code, input | undefined, fatal, ignoreBOM, stream)` → the text,
/// `null` when fatal and the input is malformed (the stream is closed), `undefined` when the
/// input is not a buffer source. `id` is the stream `streamOpen` gave `owner`, or -1 when none
/// is open; a call that flushes closes it.
pub fn text_decode<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Ok(owner) = v8::Local::<v8::Object>::try_from(args.get(0)) else { return };
    let id = args.get(1).int32_value(scope).unwrap_or(-1);
    let Some(encoding) = encoding_arg(scope, &args, 2) else { return };
    let input = args.get(3);
    let input = if input.is_undefined() { Some(&[][..]) } else { source_bytes(input) };
    let Some(input) = input else { return };
    let (fatal, ignore_bom, stream) = (args.get(4).is_true(), args.get(5).is_true(), args.get(6).is_true());
    let mut streams = scope.remove_slot::<Streams>().unwrap_or_default();
    let decoded = match usize::try_from(id).ok().and_then(|id| streams.get(scope, id, owner).map(|s| (id, s))) {
        Some((id, open)) => {
            let decoded = decode_all(scope, &mut open.decoder, input, fatal, !stream);
            if !stream || matches!(decoded, Decoded::Malformed) {
                streams.close(id);
            }
            decoded
        }
        None => decode_all(scope, &mut fresh(encoding, ignore_bom), input, fatal, !stream),
    };
    scope.set_slot(streams);
    match decoded {
        Decoded::Text(text) => rv.set(text.into()),
        Decoded::Malformed => rv.set_null(),
        Decoded::TooLong => {
            let message = v8::String::new(scope, "Invalid string length").unwrap_or_else(|| v8::String::empty(scope));
            let error = v8::Exception::range_error(scope, message);
            scope.throw_exception(error);
        }
    }
}

/// `streamOpen(owner, code, ignoreBOM)` → the id of a new streaming decoder for `owner`.
pub fn stream_open<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Ok(owner) = v8::Local::<v8::Object>::try_from(args.get(0)) else { return };
    let Some(encoding) = encoding_arg(scope, &args, 1) else { return };
    let decoder = fresh(encoding, args.get(2).is_true());
    let mut streams = scope.remove_slot::<Streams>().unwrap_or_default();
    let id = streams.open(scope, owner, decoder);
    scope.set_slot(streams);
    rv.set_int32(id as i32);
}

/// Code points of a V8 string, lone surrogates replaced by U+FFFD (a USVString).
fn usv_chars(text: &Text) -> Vec<(char, usize)> {
    match text {
        Text::Latin1(b) => b.iter().map(|&c| (c as char, 1)).collect(),
        Text::Utf16(u) => {
            char::decode_utf16(u.iter().copied()).map(|c| c.map_or(('\u{fffd}', 1), |c| (c, c.len_utf16()))).collect()
        }
    }
}

/// `utf8Length(string)`: bytes TextEncoder would produce.
pub fn utf8_length<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Some(s) = string_arg(scope, &args, 0) else { return };
    rv.set_double(s.utf8_length(scope) as f64);
}

/// `encodeInto(string, Uint8Array)` → `[read, written]`: whole code points only.
pub fn encode_into<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Some(s) = string_arg(scope, &args, 0) else { return };
    let Ok(view) = v8::Local::<v8::ArrayBufferView>::try_from(args.get(1)) else { return };
    let text = copy_text(scope, s);
    let dest = view_bytes(view);
    let (mut read, mut written) = (0usize, 0usize);
    for (c, units) in usv_chars(&text) {
        let len = c.len_utf8();
        if written + len > dest.len() {
            break;
        }
        c.encode_utf8(&mut dest[written..written + len]);
        written += len;
        read += units;
    }
    let pair = [v8::Number::new(scope, read as f64).into(), v8::Number::new(scope, written as f64).into()];
    rv.set(v8::Array::new_with_elements(scope, &pair).into());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abandoned_streams_are_swept_once_collected() {
        crate::isolate::platform::platform();
        let isolate = &mut v8::Isolate::new(Default::default());
        let mut streams = Streams::default();
        v8::scope!(let scope, isolate);
        let context = v8::Context::new(scope, Default::default());
        let scope = &mut v8::ContextScope::new(scope, context);
        // 20 000 streams left open by TextDecoders the program dropped, collected as they go.
        for i in 0..20_000 {
            {
                v8::scope!(let inner, scope);
                let owner = v8::Object::new(inner);
                streams.open(inner, owner, fresh(encoding_rs::UTF_8, false));
            }
            if i % 1000 == 999 {
                scope.low_memory_notification();
            }
        }
        // Slots are swept when the open count doubles: the table never grows past the doubling
        // point above what was alive (without the sweep it would hold 20 000).
        assert!(streams.slots.len() <= 16_384, "{} slots", streams.slots.len());
        let kept = v8::Object::new(scope);
        let id = streams.open(scope, kept, fresh(encoding_rs::UTF_8, false));
        assert!(streams.get(scope, id, kept).is_some());
        let other = v8::Object::new(scope);
        assert!(streams.get(scope, id, other).is_none(), "only the owner reaches its stream");
    }

    #[test]
    fn every_encoding_has_one_code() {
        for (code, encoding) in ENCODINGS.iter().enumerate() {
            assert_eq!(code_of(encoding), Some(code), "{} is listed once", encoding.name());
            if *encoding != REPLACEMENT {
                assert_eq!(Encoding::for_label(encoding.name().as_bytes()), Some(*encoding), "its name is its label");
            }
        }
        // Labels that are no encoding's name resolve into the table too.
        for label in ["unicode-1-1-utf-8", "cp866", "l2", "csisolatin9", "sjis", "ucs-2", "unicodefffe", "hz-gb-2312"] {
            assert!(code_of(Encoding::for_label(label.as_bytes()).unwrap()).is_some(), "{label}");
        }
    }

    #[test]
    fn labels_as_node_resolves_them() {
        let named = |label: &str, major| match resolve(label, major) {
            Resolved::Supported(e) => name(e),
            Resolved::Refused(e) => format!("refused {}", name(e)),
            Resolved::Unknown => "unknown".into(),
        };
        assert_eq!(named(" UTF8 ", 20), "utf-8");
        assert_eq!(named("latin1", 20), "windows-1252");
        assert_eq!(named("utf-16", 20), "utf-16le");
        assert_eq!(named("\u{a0}utf-8", 20), "unknown", "only ASCII whitespace is trimmed");
        assert_eq!(named("iso-2022-kr", 26), "refused replacement");
        assert_eq!(named("x-user-defined", 22), "refused x-user-defined");
        assert_eq!(named("x-user-defined", 24), "x-user-defined");
        assert_eq!(named("ISO-8859-16", 26), "iso-8859-16");
    }
}
