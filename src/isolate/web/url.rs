//! URL / URLSearchParams: WHATWG parsing and setters through the `url` crate.

use url::{form_urlencoded, quirks, Url};

use super::set_str;

/// The components URL's getters expose, in this order.
fn url_components(url: &Url) -> [String; 11] {
    [
        quirks::href(url).to_string(),
        quirks::origin(url),
        quirks::protocol(url).to_string(),
        quirks::username(url).to_string(),
        quirks::password(url).to_string(),
        quirks::host(url).to_string(),
        quirks::hostname(url).to_string(),
        quirks::port(url).to_string(),
        quirks::pathname(url).to_string(),
        quirks::search(url).to_string(),
        quirks::hash(url).to_string(),
    ]
}

fn set_components(scope: &mut v8::PinScope, rv: &mut v8::ReturnValue<v8::Value>, url: &Url) {
    let items: Vec<v8::Local<v8::Value>> = url_components(url)
        .iter()
        .map(|s| v8::String::new(scope, s).map(Into::into).unwrap_or_else(|| v8::undefined(scope).into()))
        .collect();
    rv.set(v8::Array::new_with_elements(scope, &items).into());
}

/// `urlParse(input, base?)` → the components, or `null` when the URL is invalid.
pub fn url_parse<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let input = args.get(0).to_rust_string_lossy(scope);
    let parsed = if args.get(1).is_undefined() {
        Url::parse(&input)
    } else {
        let base = args.get(1).to_rust_string_lossy(scope);
        Url::parse(&base).and_then(|base| base.join(&input))
    };
    match parsed {
        Ok(url) => set_components(scope, &mut rv, &url),
        Err(_) => rv.set_null(),
    }
}

/// `urlSet(href, field, value)` → the components after a WHATWG setter, `null` for an invalid href.
pub fn url_set<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let href = args.get(0).to_rust_string_lossy(scope);
    let field = args.get(1).to_rust_string_lossy(scope);
    let value = args.get(2).to_rust_string_lossy(scope);
    let Ok(mut url) = Url::parse(&href) else {
        rv.set_null();
        return;
    };
    // Setters other than href ignore values they cannot apply, as the URL standard says.
    let ok = match field.as_str() {
        "href" => match Url::parse(&value) {
            Ok(next) => {
                url = next;
                true
            }
            Err(_) => false,
        },
        "protocol" => quirks::set_protocol(&mut url, &value).is_ok() | true,
        "username" => quirks::set_username(&mut url, &value).is_ok() | true,
        "password" => quirks::set_password(&mut url, &value).is_ok() | true,
        "host" => quirks::set_host(&mut url, &value).is_ok() | true,
        "hostname" => quirks::set_hostname(&mut url, &value).is_ok() | true,
        "port" => quirks::set_port(&mut url, &value).is_ok() | true,
        "pathname" => {
            quirks::set_pathname(&mut url, &value);
            true
        }
        "search" => {
            quirks::set_search(&mut url, &value);
            true
        }
        "hash" => {
            quirks::set_hash(&mut url, &value);
            true
        }
        _ => false,
    };
    if ok {
        set_components(scope, &mut rv, &url);
    } else {
        rv.set_null();
    }
}

/// `formParse(string)` → `[name0, value0, name1, value1, …]` (application/x-www-form-urlencoded).
pub fn form_parse<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let input = args.get(0).to_rust_string_lossy(scope);
    let mut items: Vec<v8::Local<v8::Value>> = Vec::new();
    for (name, value) in form_urlencoded::parse(input.as_bytes()) {
        for part in [name, value] {
            let Some(s) = v8::String::new(scope, &part) else { return };
            items.push(s.into());
        }
    }
    rv.set(v8::Array::new_with_elements(scope, &items).into());
}

/// `formSerialize([name0, value0, …])` → the urlencoded string.
pub fn form_serialize<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Ok(list) = v8::Local::<v8::Array>::try_from(args.get(0)) else { return };
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    let mut i = 0;
    while i + 1 < list.length() {
        let (Some(name), Some(value)) = (list.get_index(scope, i), list.get_index(scope, i + 1)) else { return };
        let (name, value) = (name.to_rust_string_lossy(scope), value.to_rust_string_lossy(scope));
        serializer.append_pair(&name, &value);
        i += 2;
    }
    set_str(scope, &mut rv, &serializer.finish());
}
